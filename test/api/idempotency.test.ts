import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, newApp, uniqueUserId } from '../support/api-client';
import { getHarness } from '../support/harness';
import { apiWithUpdateTimeout, withWorkerStopped } from '../support/bounded-api';
import { eventually } from '../support/chain';
import { createPayment, newMerchant } from '../payments/fixtures';
import { sha256Hex } from '../../src/domain/secrets';
import type { AppCredential } from '../../src/domain/apps';

async function claimOf(app: AppCredential, key: string) {
  const h = await getHarness();
  return h.db.prisma.idempotencyRecord.findUnique({ where: { appId_key: { appId: app.appId, key } } });
}

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
    assert.equal(res.body.error.details.fields[0].field, 'header.Idempotency-Key');
  });

  test('a retry while the first request still runs answers 409 request_in_progress; another body with that key is idempotency_conflict', async () => {
    const m = await newMerchant();
    const p = (await createPayment(m)).body.payment;
    const api = await apiWithUpdateTimeout(5000);
    const key = 'cancel-in-flight';
    const cancel = (body: unknown) => call(`/v2/payments/${p.id}/cancel`, { credential: m.cred, body, headers: { 'idempotency-key': key }, baseUrl: api.baseUrl });
    try {
      await withWorkerStopped(async () => {
        // The first request holds its claim while its cancel waits for a worker that isn't there.
        const first = cancel({ reasonCode: 'customer_request' });
        await eventually(async () => (await claimOf(m.cred, key))?.state === 'in_progress', 'the first request to claim its key');
        const same = await cancel({ reasonCode: 'customer_request' });
        const other = await cancel({ reasonCode: 'abandoned' });
        assert.equal(same.status, 409, same.text);
        assert.equal(same.body.error.code, 'request_in_progress');
        assert.equal(other.status, 409, other.text);
        assert.equal(other.body.error.code, 'idempotency_conflict');
        assert.equal((await first).status, 503);
      });
    } finally {
      await api.close();
    }
  });

  test('a claim older than its 60 s lock is taken over by the retry, which runs', async () => {
    const cred = await newApp();
    const h = await getHarness();
    const rawBody = JSON.stringify({ externalUserId: uniqueUserId('takeover') });
    // A request that died mid-way a minute ago: its claim is still in_progress, its lock expired.
    await h.db.prisma.idempotencyRecord.create({
      data: {
        appId: cred.appId,
        key: 'orphaned',
        method: 'POST',
        path: '/v2/accounts',
        requestHash: sha256Hex(Buffer.concat([Buffer.from('POST /v2/accounts\n'), Buffer.from(rawBody)])),
        state: 'in_progress',
        lockedUntil: new Date(Date.now() - 1000),
      },
    });
    const res = await call('/v2/accounts', { credential: cred, rawBody, headers: { 'idempotency-key': 'orphaned', 'content-type': 'application/json' } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.get('idempotent-replayed'), null);
    assert.equal(await h.db.prisma.account.count({ where: { appId: cred.appId } }), 1);
    const record = await claimOf(cred, 'orphaned');
    assert.equal(record?.state, 'completed');
    assert.equal(record?.responseStatus, 201);
  });

  test('a stored 4xx is replayed identically for the same key and body, with Idempotent-Replayed', async () => {
    const cred = await newApp();
    const h = await getHarness();
    const body = { externalUserId: uniqueUserId('taken') };
    assert.equal((await call('/v2/accounts', { credential: cred, body, headers: { 'idempotency-key': 'first' } })).status, 201);
    const refused = await call('/v2/accounts', { credential: cred, body, headers: { 'idempotency-key': 'second' } });
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.body.error.code, 'account_already_exists');
    assert.equal(refused.headers.get('idempotent-replayed'), null);
    const replay = await call('/v2/accounts', { credential: cred, body, headers: { 'idempotency-key': 'second' } });
    assert.equal(replay.status, 409);
    assert.equal(replay.text, refused.text);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(await h.db.prisma.account.count({ where: { appId: cred.appId } }), 1);
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
