import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import type { BrowserContext, Page } from 'playwright-core';
import { createAdminApi } from '../../src/http/admin-app';
import { disableOperator } from '../../src/domain/operators/operator-accounts';
import { newContext } from '../support/browser';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import { createTestOperator, type TestOperator } from '../support/operators';
import { consoleConfig } from './support';

/**
 * Console sign-in through a real OpenID Connect provider (the `oidc-provider` package, its
 * development login and consent pages) in Chromium. The provider is at http://localhost and the
 * console at http://127.0.0.1: two sites, so the provider's redirect back is cross-site, as it is
 * with a company's provider.
 */
const CLIENT_ID = 'payments-console';
const CLIENT_SECRET = 'test-oidc-client-secret-0123456789abcdef';

/** A listener started before its handler exists: each side's URL must be known to configure the other. */
async function listenFirst(
  host?: string,
): Promise<{ server: Server; port: number; serve(handler: RequestListener): void; close(): Promise<void> }> {
  let handler: RequestListener = (_req, res) => res.writeHead(503).end();
  const server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    serve: (h) => (handler = h),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The provider's people: login name → the claims it vouches for. */
const people = new Map<string, { email?: string; email_verified?: boolean }>();

function startProvider(issuer: string, redirectUri: string): Provider {
  return new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, ...people.get(sub) }) }),
    cookies: { keys: ['test-oidc-provider-cookie-key-0123456789'] },
    features: { devInteractions: { enabled: true } },
  });
}

describe("console sign-in through the company's OpenID Connect provider", () => {
  let provider: Awaited<ReturnType<typeof listenFirst>>;
  let admin: Awaited<ReturnType<typeof listenFirst>>;
  let adminUrl: string;
  let issuer: string;

  before(async () => {
    const h = await getHarness();
    // No host: the provider answers on every local address, since "localhost" may resolve to ::1 or 127.0.0.1.
    provider = await listenFirst();
    admin = await listenFirst('127.0.0.1');
    issuer = `http://localhost:${provider.port}`;
    adminUrl = `http://127.0.0.1:${admin.port}`;
    const deps = await apiDepsOnHarness({
      config: {
        ...consoleConfig(h.config),
        admin: { ...h.config.admin, baseUrl: adminUrl, oidc: { issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET } },
      },
      engine: h.engine,
      chains: h.chain.chains,
      operator: { engine: h.engine },
    });
    admin.serve(createAdminApi(deps).callback());
    provider.serve(startProvider(issuer, `${adminUrl}/console/login/oidc/callback`).callback());
  });
  after(async () => {
    await admin?.close();
    await provider?.close();
  });

  /** One sign-in in a fresh browser, as `login` at the provider; answers the page where it ended. */
  async function signInAs(login: string): Promise<{ context: BrowserContext; page: Page }> {
    const context = await newContext('desktop');
    const page = await context.newPage();
    await page.goto(`${adminUrl}/console`);
    assert.equal(new URL(page.url()).pathname, '/console/login', 'an unsigned browser is sent to sign in');
    assert.equal(await page.getByLabel('Your operator email').count(), 0, 'no emailed code where the provider is configured');
    await page.getByRole('link', { name: 'Sign in with your company account' }).click();
    await page.waitForURL((url) => url.origin === issuer, { timeout: 30_000 });
    await page.locator('input[name=login]').fill(login);
    await page.locator('input[name=password]').fill('any password');
    await page.locator('input[name=password]').press('Enter');
    // The provider asks for consent the first time a person signs in to this client.
    await page.getByRole('button', { name: 'Continue' }).click({ timeout: 30_000 });
    await page.waitForURL((url) => url.origin === adminUrl, { timeout: 30_000 });
    await page.waitForLoadState('domcontentloaded');
    return { context, page };
  }

  /** Who the page says is signed in, or null: read once the page has settled. */
  async function signedInAs(page: Page): Promise<string | null> {
    const who = page.getByText(/^Signed in as/);
    return (await who.count()) > 0 ? ((await who.textContent()) ?? null) : null;
  }

  test('a verified operator email signs in, binds its subject, and lands on the console as that operator', async () => {
    const h = await getHarness();
    const op = await createTestOperator('approver');
    people.set('ada', { email: op.email, email_verified: true });
    const { context, page } = await signInAs('ada');
    try {
      await page.waitForURL(`${adminUrl}/console`, { timeout: 30_000 });
      assert.equal(await signedInAs(page), `Signed in as ${op.email}`);
      const row = await h.db.prisma.operator.findUniqueOrThrow({ where: { id: op.id } });
      assert.deepEqual([row.oidcIssuer, row.oidcSubject], [issuer, 'ada'], "the provider's subject is bound to the operator");
      const cookies = await context.cookies(adminUrl);
      const session = cookies.find((c) => c.name === 'pp_console');
      assert.ok(session, 'a session cookie');
      assert.equal(session.sameSite, 'Strict');
      assert.ok(!cookies.some((c) => c.name === 'pp_console_oidc' && c.value), 'the flow cookie is spent');
    } finally {
      await context.close();
    }
  });

  test('a provider account is refused unless it is an active operator: unknown, unverified, disabled, or another subject with a bound email', async () => {
    const h = await getHarness();
    const bound: TestOperator = await createTestOperator('operator');
    const leaving: TestOperator = await createTestOperator('operator');
    await h.db.prisma.operator.update({ where: { id: bound.id }, data: { oidcIssuer: issuer, oidcSubject: 'grace' } });
    people.set('mallory', { email: 'mallory@elsewhere.example', email_verified: true });
    people.set('unverified', { email: (await createTestOperator('admin')).email, email_verified: false });
    people.set('impostor', { email: bound.email, email_verified: true });
    people.set('leaving', { email: leaving.email, email_verified: true });
    await disableOperator(h.db.prisma, leaving.email);
    for (const login of ['mallory', 'unverified', 'impostor', 'leaving']) {
      const { context, page } = await signInAs(login);
      try {
        await page.getByRole('alert').waitFor({ timeout: 30_000 });
        assert.match((await page.getByRole('alert').textContent()) ?? '', /not an operator of this console, or it is disabled/, login);
        assert.equal(await signedInAs(page), null, `${login} is not signed in`);
        assert.ok(!(await context.cookies(adminUrl)).some((c) => c.name === 'pp_console' && c.value), `${login} has no session`);
      } finally {
        await context.close();
      }
    }
    const grace = await h.db.prisma.operator.findUniqueOrThrow({ where: { id: bound.id } });
    assert.equal(grace.oidcSubject, 'grace', 'the bound subject is unchanged by the impostor');
  });

  test('a callback is refused without the flow this browser started, or with a state that is not its own', async () => {
    const stray = await fetch(`${adminUrl}/console/login/oidc/callback?code=x&state=y`, { redirect: 'manual' });
    assert.equal(stray.status, 400);
    assert.match(await stray.text(), /not started in this browser/);

    const start = await fetch(`${adminUrl}/console/login/oidc`, { redirect: 'manual' });
    assert.equal(start.status, 303);
    const to = new URL(start.headers.get('location') ?? '');
    assert.equal(to.origin, issuer, 'sent to the provider');
    assert.equal(to.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(to.searchParams.get('redirect_uri'), `${adminUrl}/console/login/oidc/callback`);
    const flow = start.headers
      .getSetCookie()
      .map((c) => c.split(';')[0]!)
      .find((c) => c.startsWith('pp_console_oidc='));
    assert.ok(flow, 'the flow cookie');
    assert.match(
      start.headers.getSetCookie().find((c) => c.startsWith('pp_console_oidc='))!,
      /samesite=lax/i,
    );
    const forged = await fetch(`${adminUrl}/console/login/oidc/callback?code=x&state=not-the-flows&iss=${encodeURIComponent(issuer)}`, {
      redirect: 'manual',
      headers: { cookie: flow },
    });
    assert.equal(forged.status, 401);
    assert.ok(!forged.headers.getSetCookie().some((c) => /^pp_console=[^;]/.test(c)), 'no session');
  });

  test('the emailed-code sign-in is not offered where the provider is configured', async () => {
    const res = await fetch(`${adminUrl}/console/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=someone%40ops.example&_csrf=x',
    });
    assert.equal(res.status, 405, 'only GET /console/login is served');
  });
});
