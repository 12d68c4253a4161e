import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, newApp, uniqueUserId } from '../support/api-client';
import { getHarness } from '../support/harness';

describe('Idempotency-Key', () => {
  test('an identical retry returns the original status and body and creates nothing new', async () => {
    const cred = await newApp();
    const h = await getHarness();
    const body = { externalUserId: uniqueUserId() };
    const first = await call('/v2/accounts', { credential: cred, body, headers: { 'idempotency-key': 'create-1' } });
    const again = await call('/v2/accounts', { credential: cred, body, headers: { 'idempotency-key': 'create-1' } });
    assert.equal(first.status, 201);
    assert.equal(again.status, 201);
    assert.equal(again.text, first.text);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(await h.db.prisma.account.count({ where: { appId: cred.appId } }), 1);
  });

  test('the same key with a different body answers 409 idempotency_conflict', async () => {
    const cred = await newApp();
    const first = await call('/v2/accounts', { credential: cred, body: { externalUserId: 'a-1' }, headers: { 'idempotency-key': 'k' } });
    assert.equal(first.status, 201);
    const res = await call('/v2/accounts', { credential: cred, body: { externalUserId: 'a-2' }, headers: { 'idempotency-key': 'k' } });
    assert.equal(res.status, 409);
    assert.equal(res.body.error.code, 'idempotency_conflict');
  });

  test('a body that differs only in whitespace is not byte-identical and conflicts', async () => {
    const cred = await newApp();
    const headers = { 'idempotency-key': 'ws', 'content-type': 'application/json' };
    const first = await call('/v2/accounts', { credential: cred, method: 'POST', rawBody: '{"externalUserId":"ws-1"}', headers });
    assert.equal(first.status, 201);
    const res = await call('/v2/accounts', { credential: cred, method: 'POST', rawBody: '{ "externalUserId": "ws-1" }', headers });
    assert.equal(res.status, 409);
    assert.equal(res.body.error.code, 'idempotency_conflict');
  });

  test('the same key on another target answers 409 idempotency_conflict', async () => {
    const cred = await newApp();
    const created = await call('/v2/accounts', { credential: cred, body: { externalUserId: 't-1' }, headers: { 'idempotency-key': 'tgt' } });
    const accountId = created.body.account.id;
    const res = await call(`/v2/accounts/${accountId}/connected-wallets`, {
      credential: cred,
      body: { externalUserId: 't-1' },
      headers: { 'idempotency-key': 'tgt' },
    });
    assert.equal(res.status, 409);
    assert.equal(res.body.error.code, 'idempotency_conflict');
  });

  test('keys are scoped per app: two apps may use the same key', async () => {
    const a = await newApp();
    const b = await newApp();
    const ra = await call('/v2/accounts', { credential: a, body: { externalUserId: 'same' }, headers: { 'idempotency-key': 'shared' } });
    const rb = await call('/v2/accounts', { credential: b, body: { externalUserId: 'same' }, headers: { 'idempotency-key': 'shared' } });
    assert.equal(ra.status, 201);
    assert.equal(rb.status, 201);
    assert.notEqual(ra.body.account.id, rb.body.account.id);
  });

  test('an invalid Idempotency-Key answers 400 naming the header', async () => {
    const cred = await newApp();
    const res = await call('/v2/accounts', { credential: cred, body: { externalUserId: 'k' }, headers: { 'idempotency-key': 'x'.repeat(257) } });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.details.fields[0].field, 'header');
  });

  test('a retry while the first request still runs answers 409 request_in_progress', async () => {
    const cred = await newApp();
    const h = await getHarness();
    // A claim held by a request that is still running (its lock has not expired).
    await h.db.prisma.idempotencyRecord.create({
      data: {
        appId: cred.appId,
        key: 'running',
        method: 'POST',
        path: '/v2/accounts',
        requestHash: 'irrelevant-because-still-running',
        state: 'in_progress',
        lockedUntil: new Date(Date.now() + 60_000),
      },
    });
    const res = await call('/v2/accounts', { credential: cred, body: { externalUserId: 'r-1' }, headers: { 'idempotency-key': 'running' } });
    assert.equal(res.status, 409);
    assert.ok(['request_in_progress', 'idempotency_conflict'].includes(res.body.error.code));
  });

  test('50 identical concurrent requests execute once', async () => {
    const cred = await newApp();
    const h = await getHarness();
    const body = { externalUserId: uniqueUserId('burst') };
    const results = await Promise.all(
      Array.from({ length: 50 }, () => call('/v2/accounts', { credential: cred, body, headers: { 'idempotency-key': 'burst' } })),
    );
    const created = results.filter((r) => r.status === 201);
    const inProgress = results.filter((r) => r.status === 409 && r.body.error.code === 'request_in_progress');
    assert.equal(created.length + inProgress.length, 50, JSON.stringify(results.map((r) => r.status)));
    assert.ok(created.length >= 1);
    assert.equal(new Set(created.map((r) => r.body.account.id)).size, 1);
    assert.equal(await h.db.prisma.account.count({ where: { appId: cred.appId } }), 1);
    assert.equal(await h.db.prisma.event.count({ where: { appId: cred.appId, name: 'account.created' } }), 1);
  });
});
