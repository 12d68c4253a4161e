import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { call, newApp, basicAuth } from '../support/api-client';
import { getHarness, apiDepsOnHarness } from '../support/harness';
import { listenApi } from '../support/bounded-api';
import { createApi } from '../../src/http/app';
import { ApiError } from '../../src/domain/requests/errors';
import { createCursorCodec } from '../../src/domain/requests/pagination';

function assertEnvelope(body: any, code: string) {
  assert.equal(typeof body?.error?.message, 'string');
  assert.ok(body.error.message.length >= 1 && body.error.message.length <= 1000);
  assert.equal(body.error.code, code);
}

describe('errors use the spec envelope', () => {
  test('an unknown route answers 404 not_found in the envelope', async () => {
    const cred = await newApp();
    const res = await call('/v2/nothing-here', { credential: cred });
    assert.equal(res.status, 404);
    assertEnvelope(res.body, 'not_found');
    const outside = await call('/not-an-api-path');
    assert.equal(outside.status, 404);
    assertEnvelope(outside.body, 'not_found');
  });

  test('malformed JSON answers 400 bad_request and creates nothing', async () => {
    const cred = await newApp();
    const h = await getHarness();
    const before = await h.db.prisma.account.count();
    const res = await call('/v2/accounts', {
      credential: cred,
      rawBody: '{"externalUserId": "x",',
      headers: { 'content-type': 'application/json' },
      method: 'POST',
    });
    assert.equal(res.status, 400);
    assertEnvelope(res.body, 'bad_request');
    assert.equal(await h.db.prisma.account.count(), before);
  });

  test('an oversized body answers 413 payload_too_large', async () => {
    const cred = await newApp();
    const h = await getHarness();
    const big = JSON.stringify({ externalUserId: 'big', metadata: { blob: 'x'.repeat(h.config.http.maxBodyBytes) } });
    const res = await call('/v2/accounts', {
      credential: cred,
      rawBody: big,
      headers: { 'content-type': 'application/json' },
      method: 'POST',
    });
    assert.equal(res.status, 413);
    assertEnvelope(res.body, 'payload_too_large');
  });

  test('a body that is not application/json answers 415 unsupported_media_type', async () => {
    const cred = await newApp();
    const res = await call('/v2/accounts', {
      credential: cred,
      rawBody: 'externalUserId=abc',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      method: 'POST',
    });
    assert.equal(res.status, 415);
    assertEnvelope(res.body, 'unsupported_media_type');
  });

  test('a wrong method on a known path answers 405 in the envelope', async () => {
    const cred = await newApp();
    const res = await call('/v2/partners/config', { credential: cred, method: 'DELETE' });
    assert.equal(res.status, 405);
    assertEnvelope(res.body, 'method_not_allowed');
  });

  test('an unexpected exception answers 500 internal_error and leaks no internals', async () => {
    const cred = await newApp();
    const api = createApi(
      await apiDepsOnHarness({
        extraRoutes: [
          (router) => {
            router.get('/v2/boom', () => {
              throw new Error('database password is hunter2 at /srv/app/secret.ts:42');
            });
          },
        ],
      }),
    );
    const server = api.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/v2/boom`, {
        headers: { authorization: basicAuth(cred.appId, cred.appSecret) },
      });
      const text = await res.text();
      assert.equal(res.status, 500);
      assertEnvelope(JSON.parse(text), 'internal_error');
      assert.ok(!text.includes('hunter2') && !text.includes('secret.ts'), text);
      assert.equal(res.headers.get('svc-version'), '2026-09-09');
    } finally {
      server.close();
    }
  });

  test('validation failures answer 400 with details naming each field', async () => {
    const cred = await newApp();
    const res = await call('/v2/accounts', { credential: cred, body: { externalUserId: '', subjectType: 'robot', extra: 1 } });
    assert.equal(res.status, 400);
    assertEnvelope(res.body, 'bad_request');
    const fields = res.body.error.details.fields.map((f: { field: string }) => f.field);
    assert.ok(fields.includes('body.externalUserId'), JSON.stringify(fields));
    assert.ok(fields.includes('body.subjectType'), JSON.stringify(fields));
  });

  test('a path parameter of the wrong shape answers 400 naming the path field', async () => {
    const cred = await newApp();
    const res = await call('/v2/accounts/not-an-account-id', { credential: cred });
    assert.equal(res.status, 400);
    assert.deepEqual(
      res.body.error.details.fields.map((f: { field: string }) => f.field),
      ['path.accountId'],
    );
  });
});

describe('authentication and scopes', () => {
  test('a missing credential answers 401 unauthorized with a Basic challenge', async () => {
    const res = await call('/v2/partners/config');
    assert.equal(res.status, 401);
    assertEnvelope(res.body, 'unauthorized');
    assert.match(res.headers.get('www-authenticate') ?? '', /^Basic/);
  });

  test('a wrong secret or unknown app answers 401', async () => {
    const cred = await newApp();
    const wrong = await call('/v2/partners/config', { credential: { ...cred, appSecret: `${cred.appSecret}x` } });
    assert.equal(wrong.status, 401);
    const unknown = await call('/v2/partners/config', { credential: { ...cred, appId: 'app_doesnotexist' } });
    assert.equal(unknown.status, 401);
    const garbage = await call('/v2/partners/config', { headers: { authorization: 'Bearer abc' } });
    assert.equal(garbage.status, 401);
  });

  test('a credential without the endpoint scope answers 403 forbidden', async () => {
    const cred = await newApp({ scopes: ['v2:payments'] });
    const res = await call('/v2/accounts', { credential: cred, body: { externalUserId: 'scope-test' } });
    assert.equal(res.status, 403);
    assertEnvelope(res.body, 'forbidden');
    assert.equal(res.body.error.details.requiredScope, 'v2:accounts');
  });

  test("another app's account id answers 404, even in the same environment", async () => {
    const owner = await newApp();
    const other = await newApp();
    const created = await call('/v2/accounts', { credential: owner, body: { externalUserId: 'owned-1' } });
    assert.equal(created.status, 201);
    const id = created.body.account.id;
    const res = await call(`/v2/accounts/${id}`, { credential: other });
    assert.equal(res.status, 404);
    assertEnvelope(res.body, 'not_found');
    const byExternal = await call('/v2/accounts/external/owned-1', { credential: other });
    assert.equal(byExternal.status, 404);
  });
});

describe('versioning', () => {
  test('Svc-Version is echoed on success and on error', async () => {
    const cred = await newApp();
    const ok = await call('/v2/partners/config', { credential: cred });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('svc-version'), '2026-09-09');
    const err = await call('/v2/partners/config');
    assert.equal(err.status, 401);
    assert.equal(err.headers.get('svc-version'), '2026-09-09');
  });

  test('a request that sends the pinned version is served', async () => {
    const cred = await newApp();
    const res = await call('/v2/partners/config', { credential: cred, headers: { 'svc-version': '2026-09-09' } });
    assert.equal(res.status, 200);
  });

  test('a request that sends another version is refused with 400 api_version_mismatch', async () => {
    const cred = await newApp();
    const res = await call('/v2/partners/config', { credential: cred, headers: { 'svc-version': '2025-01-01' } });
    assert.equal(res.status, 400);
    assertEnvelope(res.body, 'api_version_mismatch');
    assert.equal(res.body.error.details.pinnedVersion, '2026-09-09');
    assert.equal(res.headers.get('svc-version'), '2026-09-09');
  });
});

describe('pagination cursors', () => {
  test('a cursor round-trips within its scope', () => {
    const codec = createCursorCodec('k'.repeat(40));
    const cursor = codec.encode('payments:app_1', { t: '2026-01-01T00:00:00.000Z', id: 'payment_x' });
    assert.deepEqual(codec.decode('payments:app_1', cursor), { t: '2026-01-01T00:00:00.000Z', id: 'payment_x' });
  });

  test('a tampered, foreign or garbage cursor is a 400 bad_request', () => {
    const codec = createCursorCodec('k'.repeat(40));
    const cursor = codec.encode('payments:app_1', { t: '2026-01-01T00:00:00.000Z', id: 'payment_x' });
    const [payload, mac] = cursor.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify({ s: 'payments:app_1', p: { t: '2030-01-01T00:00:00.000Z', id: 'z' } })).toString(
      'base64url',
    );
    for (const bad of [`${forged}.${mac}`, `${payload}.${mac.replace(/.$/, (c) => (c === '0' ? '1' : '0'))}`, 'garbage', `${payload}`]) {
      assert.throws(
        () => codec.decode('payments:app_1', bad),
        (e: unknown) => e instanceof ApiError && e.status === 400,
      );
    }
    assert.throws(
      () => codec.decode('payments:app_2', cursor),
      (e: unknown) => e instanceof ApiError && e.status === 400,
    );
  });
});

describe('Server-Timing (SERVER_TIMING, the bench)', () => {
  test("off by default; on, an answer names each step it took and the API's total", async () => {
    const h = await getHarness();
    const cred = await newApp();
    const headers = { authorization: basicAuth(cred.appId, cred.appSecret) };
    const plain = await fetch(`${h.baseUrl}/v2/partners/config`, { headers });
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.get('server-timing'), null);

    const timed = await listenApi(await apiDepsOnHarness({ config: { ...h.config, http: { ...h.config.http, serverTiming: true } } }));
    try {
      const res = await fetch(`${timed.baseUrl}/v2/partners/config`, { headers });
      assert.equal(res.status, 200);
      const steps = (res.headers.get('server-timing') ?? '').split(', ').map((s) => s.split(';dur=')[0]);
      assert.deepEqual(steps, ['auth', 'quota', 'total']);
      const refused = await fetch(`${timed.baseUrl}/v2/partners/config`, { headers: { authorization: basicAuth(cred.appId, 'wrong') } });
      assert.equal(refused.status, 401);
      assert.match(refused.headers.get('server-timing') ?? '', /^auth;dur=[0-9.]+, total;dur=[0-9.]+$/);
    } finally {
      await timed.close();
    }
  });
});
