import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { listenApi } from '../support/bounded-api';
import { apiDepsOnHarness, getHarness } from '../support/harness';

const TOKEN = 'console-sessions-admin-token-0123456789abcdef';
const NEW_TOKEN = 'console-sessions-admin-token-rotated-0123456789';

/** The API with the console on under `token`, on the shared harness's database and service secret. */
async function startConsole(token: string) {
  const h = await getHarness();
  return listenApi(
    await apiDepsOnHarness({
      config: { ...h.config, admin: { apiToken: token } },
      engine: h.engine,
      chains: h.chain.chains,
      operator: { engine: h.engine },
    }),
  );
}
type Console = Awaited<ReturnType<typeof startConsole>>;

const cookieOf = (res: Response, name: string) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith(`${name}=`) && c.length > name.length + 1);
const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

/** Signs in over plain HTTP, as the login form does; answers the session cookie (`pp_console=...`). */
async function signIn(c: Console, token: string): Promise<string> {
  const form = await fetch(`${c.baseUrl}/console/login`);
  const loginCookie = cookieOf(form, 'pp_console_login');
  assert.ok(loginCookie, 'the login form sets its CSRF cookie');
  const res = await fetch(`${c.baseUrl}/console/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: loginCookie },
    body: new URLSearchParams({ who: 'ops@example.com', token, _csrf: csrfOf(await form.text()) }).toString(),
  });
  assert.equal(res.status, 303);
  const session = cookieOf(res, 'pp_console');
  assert.ok(session, 'a session cookie');
  return session;
}

/** Where the console sends a browser carrying `cookie`: /console when the session holds, /console/login when not. */
async function landing(c: Console, cookie: string): Promise<string> {
  const res = await fetch(`${c.baseUrl}/console`, { redirect: 'manual', headers: { cookie } });
  return res.status === 200 ? '/console' : new URL(res.headers.get('location') ?? '', c.baseUrl).pathname;
}

describe('console sessions end on the server, not only at expiry', () => {
  let first: Console;
  before(async () => {
    first = await startConsole(TOKEN);
  });
  after(async () => {
    await first?.close();
  });

  test('after logout the same cookie, replayed, no longer signs anyone in', async () => {
    const session = await signIn(first, TOKEN);
    assert.equal(await landing(first, session), '/console');
    const page = await (await fetch(`${first.baseUrl}/console`, { headers: { cookie: session } })).text();
    const out = await fetch(`${first.baseUrl}/console/logout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session },
      body: new URLSearchParams({ _csrf: csrfOf(page) }).toString(),
    });
    assert.equal(out.status, 303);
    // A copy of the cookie kept from before the logout (a stolen one, a second tab) is refused too.
    assert.equal(await landing(first, session), '/console/login');
  });

  test('a session opened under one admin token ends when the token changes, and lives on under the same token', async () => {
    const session = await signIn(first, TOKEN);
    const sameToken = await startConsole(TOKEN);
    const newToken = await startConsole(NEW_TOKEN);
    try {
      assert.equal(await landing(sameToken, session), '/console', 'another process with the same token honours the session');
      assert.equal(await landing(newToken, session), '/console/login', 'a process with a new admin token does not');
      const fresh = await signIn(newToken, NEW_TOKEN);
      assert.equal(await landing(newToken, fresh), '/console');
    } finally {
      await Promise.all([sameToken.close(), newToken.close()]);
    }
  });
});
