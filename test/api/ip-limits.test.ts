import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApi } from '../../src/http/app';
import { authenticateApp } from '../../src/domain/apps/apps';
import { ConfigError, loadConfig, type ServiceConfig } from '../../src/config';
import { basicAuth, newApp, responseChecker } from '../support/api-client';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import { listenApi } from '../support/bounded-api';
import { until } from '../support/until';

/**
 * The per-client-address limits that run before any authentication work (failed Basic logins, the
 * hosted checkout, public Payment creation), on an API of its own whose trusted proxy is 127.0.0.1.
 * Requests come from 127.0.0.1 with an X-Forwarded-For of the test's own documentation-range address,
 * or from another loopback address (127.0.3.x, which no other test uses) as an untrusted peer.
 */
const POLICY = { points: 3, windowSeconds: 3600 };
let server: Server;
let baseUrl: string;
let verifications = 0;
/** A check's extra time, as under load: checks in flight at once. */
let checkDelayMs = 0;
let config: ServiceConfig;

before(async () => {
  const h = await getHarness();
  config = {
    ...h.config,
    http: { ...h.config.http, trustedProxies: ['127.0.0.1'] },
    // Failed logins are shared between processes once a second: the cross-process test waits for that.
    ipRateLimits: {
      failedLogins: { ...POLICY, syncMs: 1000 },
      checkout: POLICY,
      publicPayments: POLICY,
      dashboardSignIn: POLICY,
      operatorSignIn: POLICY,
    },
  };
  const verify: typeof authenticateApp = async (prisma, appId, secret) => {
    verifications += 1;
    if (checkDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, checkDelayMs));
    return authenticateApp(prisma, appId, secret);
  };
  const api = createApi(
    await apiDepsOnHarness({
      config,
      engine: h.engine,
      credentials: {
        authenticate: (appId, secret) => verify(h.db.prisma, appId, secret),
        forget: () => undefined,
        setLive: () => undefined,
      },
    }),
  );
  server = await new Promise<Server>((resolve) => {
    const s = api.listen(0, '127.0.0.1', () => resolve(s));
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

interface Answer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** A request from a chosen local address (the socket's peer), checked against the OpenAPI document. */
async function send(path: string, opts: { from?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const answer = await new Promise<Answer>((resolve, reject) => {
    const req = http.request(
      `${baseUrl}${path}`,
      { headers: opts.headers ?? {}, localAddress: opts.from ?? '127.0.0.1', agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers.set(name, value);
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers, body, text });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
  (await responseChecker()).check({ method: 'GET', path, ...answer });
  return answer;
}

const forwarded = (address: string) => ({ 'x-forwarded-for': address });

function assertRateLimited(res: Answer, what: string): void {
  assert.equal(res.status, 429, `${what}: ${res.text}`);
  assert.equal(res.body.error.code, 'rate_limited');
  assert.ok(Number(res.headers.get('retry-after')) >= 1, 'Retry-After is an integer >= 1');
  assert.equal(res.headers.get('ratelimit-limit'), String(POLICY.points));
  assert.equal(res.headers.get('ratelimit-remaining'), '0');
  assert.ok(Number(res.headers.get('ratelimit-reset')) >= 0);
}

describe('failed Basic logins per client address and app', () => {
  test('past the quota a failure is 429, yet the right secret from that address still works; other apps and addresses are unaffected', async () => {
    const cred = await newApp();
    const auth = (secret: string, appId = cred.appId) => ({ authorization: basicAuth(appId, secret) });
    const client = forwarded('198.51.100.10');
    for (let i = 0; i < 5; i += 1)
      assert.equal((await send('/v2/partners/config', { headers: { ...client, ...auth(cred.appSecret) } })).status, 200);
    for (let i = 0; i < POLICY.points; i += 1)
      assert.equal((await send('/v2/partners/config', { headers: { ...client, ...auth('wrong-secret') } })).status, 401);

    assertRateLimited(await send('/v2/partners/config', { headers: { ...client, ...auth('wrong-secret') } }), 'a fourth failure');
    const checked = verifications;
    const right = await send('/v2/partners/config', { headers: { ...client, ...auth(cred.appSecret) } });
    assert.equal(right.status, 200, `the right secret from the address that failed: ${right.text}`);
    assert.equal(verifications, checked + 1, 'its secret was checked, not refused unseen');

    const otherApp = await newApp();
    assert.equal(
      (await send('/v2/partners/config', { headers: { ...client, ...auth('wrong-secret', otherApp.appId) } })).status,
      401,
      "another app's failures from the same address have a quota of their own",
    );
    const other = forwarded('198.51.100.11');
    assert.equal((await send('/v2/partners/config', { headers: { ...other, ...auth(cred.appSecret) } })).status, 200);
    assert.equal((await send('/v2/partners/config', { headers: { ...other, ...auth('wrong-secret') } })).status, 401);
  });

  test('checks in flight are never counted: forty slow checks at once from one address with the right secret all pass', async () => {
    const cred = await newApp();
    const headers = { ...forwarded('198.51.100.12'), authorization: basicAuth(cred.appId, cred.appSecret) };
    checkDelayMs = 200;
    try {
      const answers = await Promise.all(Array.from({ length: 40 }, () => send('/v2/partners/config', { headers })));
      assert.deepEqual(
        answers.map((a) => a.status),
        Array(40).fill(200),
      );
    } finally {
      checkDelayMs = 0;
    }
  });

  test('X-Forwarded-For is ignored from a peer that is not a trusted proxy', async () => {
    const cred = await newApp();
    const wrong = { authorization: basicAuth(cred.appId, 'wrong-secret') };
    for (let i = 0; i < POLICY.points; i += 1) {
      assert.equal(
        (await send('/v2/partners/config', { from: '127.0.3.1', headers: { ...wrong, ...forwarded(`198.51.100.${30 + i}`) } })).status,
        401,
      );
    }
    assertRateLimited(
      await send('/v2/partners/config', { from: '127.0.3.1', headers: { ...wrong, ...forwarded('198.51.100.39') } }),
      'a new forwarded address from the same untrusted peer',
    );
  });

  test('from a trusted proxy, the address it forwarded counts, not what the client wrote before it', async () => {
    const cred = await newApp();
    const wrong = { authorization: basicAuth(cred.appId, 'wrong-secret') };
    for (let i = 0; i < POLICY.points; i += 1) {
      assert.equal(
        (await send('/v2/partners/config', { headers: { ...wrong, ...forwarded(`203.0.113.${i + 1}, 198.51.100.20`) } })).status,
        401,
      );
    }
    assertRateLimited(
      await send('/v2/partners/config', { headers: { ...wrong, ...forwarded('203.0.113.99, 198.51.100.20') } }),
      'the same forwarded client behind a forged hop',
    );
    assert.equal(
      (await send('/v2/partners/config', { headers: { ...wrong, ...forwarded('198.51.100.21') } })).status,
      401,
      'another forwarded client has its own quota',
    );
  });
});

describe('per-address counts across API processes', () => {
  test('failures counted by one API process reach PostgreSQL without another request, and another process answers the next failure 429', async () => {
    const h = await getHarness();
    const other = await listenApi(await apiDepsOnHarness({ config }));
    try {
      const cred = await newApp();
      const client = forwarded('198.51.100.60');
      // At once, so that all of them are counted within one sync interval of the first.
      const failures = await Promise.all(
        Array.from({ length: POLICY.points }, () =>
          send('/v2/partners/config', { headers: { ...client, authorization: basicAuth(cred.appId, 'wrong-secret') } }),
        ),
      );
      assert.deepEqual(
        failures.map((r) => r.status),
        Array(POLICY.points).fill(401),
      );
      await until(async (saw) => {
        const rows = await h.db.pool.query<{ points: number }>(
          "SELECT points FROM rate_limits WHERE key LIKE 'quota:login:198.51.100.60:%'",
        );
        saw(rows.rows);
        return rows.rows[0]?.points === POLICY.points;
      }, "the first process's failures in PostgreSQL");
      const res = await fetch(`${other.baseUrl}/v2/partners/config`, {
        headers: { ...client, authorization: basicAuth(cred.appId, cred.appSecret) },
      });
      assert.equal(res.status, 200, 'the right secret is never refused by failures');
      const wrong = await fetch(`${other.baseUrl}/v2/partners/config`, {
        headers: { ...client, authorization: basicAuth(cred.appId, 'wrong-secret') },
      });
      assert.equal(wrong.status, 429, "the other process counts the first one's failures");
    } finally {
      await other.close();
    }
  });
});

describe('the hosted checkout per client address', () => {
  test('answers 429 once the address has spent its quota, before the Payment is read', async () => {
    const client = forwarded('198.51.100.40');
    for (let i = 0; i < POLICY.points; i += 1) assert.equal((await send('/checkout/payment_unknown', { headers: client })).status, 404);
    assertRateLimited(await send('/checkout/payment_unknown', { headers: client }), 'a fourth checkout request');
    assertRateLimited(await send('/checkout/payment_unknown/status', { headers: client }), 'the status poll of the same address');
    assert.equal((await send('/checkout/payment_unknown', { headers: forwarded('198.51.100.41') })).status, 404);
  });
});

describe('public Payment creation per client address', () => {
  test('answers 429 once the address has spent its quota, before the app is looked up', async () => {
    const client = forwarded('198.51.100.50');
    const path = '/v2/public/apps/app_unknown/payments/configuration';
    for (let i = 0; i < POLICY.points; i += 1) assert.equal((await send(path, { headers: client })).status, 404);
    assertRateLimited(await send(path, { headers: client }), 'a fourth request for an unknown app');
    assert.equal((await send(path, { headers: forwarded('198.51.100.51') })).status, 404);
  });
});

describe("the dashboard's sign-in forms per client address", () => {
  test('answer 429 once the address has spent its quota, whichever emails it tries, before any code is looked at', async () => {
    const post = (path: string, address: string, email: string) =>
      fetch(`${baseUrl}/dashboard${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...forwarded(address) },
        body: new URLSearchParams({ email, code: '123456', _csrf: 'none' }).toString(),
        redirect: 'manual',
      });
    const client = '198.51.100.70';
    const answers = [
      await post('/login', client, 'a@example.com'),
      await post('/login/code', client, 'b@example.com'),
      await post('/login', client, 'c@example.com'),
    ];
    assert.deepEqual(
      answers.map((r) => r.status),
      [403, 403, 403],
      'refused for their form token, each counted',
    );
    const limited = await post('/login/code', client, 'd@example.com');
    assert.equal(limited.status, 429, await limited.text());
    assert.equal((await post('/login', '198.51.100.71', 'a@example.com')).status, 403, 'another address has its own quota');
  });
});

describe('TRUSTED_PROXIES', () => {
  test('takes addresses, CIDR ranges and proxy names, and fails start-up naming the setting for anything else', () => {
    assert.deepEqual(loadConfig({ TRUSTED_PROXIES: '10.0.0.1, 10.1.0.0/16,loopback' }).http.trustedProxies, [
      '10.0.0.1',
      '10.1.0.0/16',
      'loopback',
    ]);
    assert.deepEqual(loadConfig({}).http.trustedProxies, []);
    assert.throws(
      () => loadConfig({ TRUSTED_PROXIES: '10.0.0.1,proxy.internal' }),
      (err: unknown) => err instanceof ConfigError && /TRUSTED_PROXIES/.test(err.message),
    );
  });
});
