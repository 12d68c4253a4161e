import { invitePartnerUser } from '../../src/domain/dashboard/partner-users';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { clientTokenFor, newApp } from '../support/api-client';
import { newAccount, newMerchant, newPayment } from '../support/fixtures';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import { listenApi } from '../support/bounded-api';
import { cookiePlace } from '../../src/http/sealed-cookies';

interface SetCookie {
  name: string;
  value: string;
  attrs: Record<string, string | true>;
}

function parseSetCookie(header: string): SetCookie {
  const [pair, ...attrs] = header.split(/;\s*/);
  const at = pair!.indexOf('=');
  return {
    name: pair!.slice(0, at),
    value: pair!.slice(at + 1),
    attrs: Object.fromEntries(
      attrs.map((a) => {
        const [k, ...v] = a.split('=');
        return [k!.toLowerCase(), v.length > 0 ? v.join('=').toLowerCase() : true];
      }),
    ),
  };
}

/** The cookies an answer sets, by name; a cleared one (empty value) is left out. */
function cookiesOf(res: Response): Map<string, SetCookie> {
  const set = res.headers.getSetCookie().map(parseSetCookie);
  return new Map(set.filter((c) => c.value !== '').map((c) => [c.name, c]));
}

/** What a browser requires of a `__Host-` cookie over https, and of any of ours over http. */
function assertPlaced(cookie: SetCookie | undefined, https: boolean, httpPath: string): void {
  assert.ok(cookie, 'the cookie is set');
  assert.equal(cookie.attrs.domain, undefined, `${cookie.name}: no Domain`);
  assert.equal(cookie.attrs.httponly, true, `${cookie.name}: HttpOnly`);
  assert.equal(cookie.attrs.samesite, 'strict', `${cookie.name}: SameSite=Strict`);
  if (https) {
    assert.ok(cookie.name.startsWith('__Host-'), cookie.name);
    assert.equal(cookie.attrs.path, '/', `${cookie.name}: Path=/`);
    assert.equal(cookie.attrs.secure, true, `${cookie.name}: Secure`);
  } else {
    assert.ok(!cookie.name.startsWith('__'), cookie.name);
    assert.equal(cookie.attrs.path, httpPath, `${cookie.name}: the area's path`);
    assert.equal(cookie.attrs.secure, undefined, `${cookie.name}: not Secure over http`);
  }
}

async function apiAt(publicBaseUrl: string) {
  const h = await getHarness();
  return listenApi(
    await apiDepsOnHarness({
      config: { ...h.config, http: { ...h.config.http, publicBaseUrl } },
      // The client routes, for the checkout's Vault option.
      client: { engine: h.engine },
    }),
  );
}

const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
const header = (cookies: Iterable<SetCookie>) => [...cookies].map((c) => `${c.name}=${c.value}`).join('; ');

describe('Cookie names: __Host- over https, plain over http', () => {
  test('cookiePlace: over https __Host-<name>, Path=/ and Secure; over http the name and path as given', () => {
    assert.deepEqual(cookiePlace('https://pay.example.com', 'pp_dashboard', '/dashboard'), {
      name: '__Host-pp_dashboard',
      path: '/',
      secure: true,
    });
    assert.deepEqual(cookiePlace('http://localhost:3000', 'pp_dashboard', '/dashboard'), {
      name: 'pp_dashboard',
      path: '/dashboard',
      secure: false,
    });
  });

  for (const [publicBaseUrl, https] of [
    ['https://pay.example.com', true],
    ['http://localhost:3000', false],
  ] as const) {
    test(`the dashboard's sign-in and session cookies with ${publicBaseUrl}, and the session they carry works`, async () => {
      const h = await getHarness();
      const api = await apiAt(publicBaseUrl);
      try {
        const app = await newApp();
        const email = `cookies-${https ? 'https' : 'http'}-${Date.now()}@partner.example`;
        // Invited as the CLI does (the admin plane is another listener, not under test here).
        await invitePartnerUser(h.db.prisma, app.appId, { email, role: 'viewer', actor: 'ops@example.com' });

        const form = await fetch(`${api.baseUrl}/dashboard/login`);
        const login = cookiesOf(form);
        assert.deepEqual([...login.keys()], [https ? '__Host-pp_dashboard_login' : 'pp_dashboard_login']);
        assertPlaced([...login.values()][0], https, '/dashboard');

        const before = h.mailbox.received.length;
        const asked = await fetch(`${api.baseUrl}/dashboard/login`, {
          method: 'POST',
          headers: { cookie: header(login.values()), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ email, _csrf: csrfOf(await form.text()) }).toString(),
        });
        assert.equal(asked.status, 200);
        const code = h.mailbox.codeOf(await h.mailbox.next(email, before));
        const entered = await fetch(`${api.baseUrl}/dashboard/login/code`, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie: header(cookiesOf(asked).values()), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ email, code, _csrf: csrfOf(await asked.text()) }).toString(),
        });
        assert.equal(entered.status, 303);
        const session = cookiesOf(entered);
        assert.deepEqual([...session.keys()], [https ? '__Host-pp_dashboard' : 'pp_dashboard']);
        assertPlaced([...session.values()][0], https, '/dashboard');

        const home = await fetch(`${api.baseUrl}/dashboard`, { redirect: 'manual', headers: { cookie: header(session.values()) } });
        assert.equal(home.status, 200, 'the session cookie signs the member in');
        assert.match(await home.text(), new RegExp(email.replace(/[.]/g, '\\.')));
        const unprefixed = [...session.values()].map((c) => `${c.name.replace('__Host-', '')}=${c.value}`).join('; ');
        if (https) {
          const plain = await fetch(`${api.baseUrl}/dashboard`, { redirect: 'manual', headers: { cookie: unprefixed } });
          assert.notEqual(plain.status, 200, 'the same value without the prefix is no session');
        }
      } finally {
        await api.close();
      }
    });

    test(`the checkout's session cookie with ${publicBaseUrl} is named by its Payment and opens its session`, async () => {
      const api = await apiAt(publicBaseUrl);
      try {
        const m = await newMerchant();
        const payer = await newAccount(m.cred);
        const payment = await newPayment(m, { amount: '12.5' });
        const token = await clientTokenFor(m.cred, payer);
        const opened = await fetch(`${api.baseUrl}/checkout/${payment.id}/session`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ clientToken: token, clientSecret: payment.secret }).toString(),
        });
        assert.equal(opened.status, 303);
        const cookies = cookiesOf(opened);
        const name = `${https ? '__Host-' : ''}checkout_session_${payment.id}`;
        assert.deepEqual([...cookies.keys()], [name]);
        assertPlaced(cookies.get(name), https, `/checkout/${payment.id}`);
        const vault = await fetch(`${api.baseUrl}/checkout/${payment.id}/vault`, { headers: { cookie: header(cookies.values()) } });
        assert.equal(vault.status, 200, 'the cookie opens the session');
      } finally {
        await api.close();
      }
    });
  }
});
