import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, newApp, uniqueUserId } from '../support/api-client';
import { getHarness } from '../support/harness';
import { apiWithUpdateTimeout, withWorkerStopped } from '../support/bounded-api';
import { eventually } from '../support/chain';
import { createPayment, newMerchant, waitForPayment, newAccount } from '../support/fixtures';
import { sha256Hex } from '../../src/platform/secrets';
import type { AppCredential } from '../../src/domain/apps/apps';
import { usBody } from '../bank-accounts/fixtures';
import { activeVault, policyBody, uniqueEmail } from '../vaults/support';
import { newPayer, payTo, pokeScanner } from '../support/chain';

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
    const created = await call('/v2/accounts', {
      credential: cred,
      body: { externalUserId: 't-1' },
      headers: { 'idempotency-key': 'tgt' },
    });
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
    const res = await call('/v2/accounts', {
      credential: cred,
      body: { externalUserId: 'k' },
      headers: { 'idempotency-key': 'x'.repeat(257) },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.details.fields[0].field, 'header.Idempotency-Key');
  });

  test('a retry while the first request still runs answers 409 request_in_progress; another body with that key is idempotency_conflict', async () => {
    const m = await newMerchant();
    const p = (await createPayment(m)).body.payment;
    const api = await apiWithUpdateTimeout(5000);
    const key = 'cancel-in-flight';
    const cancel = (body: unknown) =>
      call(`/v2/payments/${p.id}/cancel`, { credential: m.cred, body, headers: { 'idempotency-key': key }, baseUrl: api.baseUrl });
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
    const res = await call('/v2/accounts', {
      credential: cred,
      rawBody,
      headers: { 'idempotency-key': 'orphaned', 'content-type': 'application/json' },
    });
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
    // A burst past the API's write gate is refused at the door, having done nothing (a busy machine admits fewer at once).
    const refused = results.filter((r) => r.status === 503 && r.body.error.code === 'service_unavailable');
    assert.equal(created.length + inProgress.length + refused.length, 50, JSON.stringify(results.map((r) => r.status)));
    assert.ok(created.length >= 1);
    assert.equal(new Set(created.map((r) => r.body.account.id)).size, 1);
    assert.equal(await h.db.prisma.account.count({ where: { appId: cred.appId } }), 1);
    assert.equal(await h.db.prisma.event.count({ where: { appId: cred.appId, name: 'account.created' } }), 1);
  });
});

let fixKeys = 0;
const fixKey = () => `fix-${process.pid}-${(fixKeys += 1)}`;

/**
 * Stripe's rule: only a request that started executing owns its key. A refusal of the request's own
 * shape (body, query, path, headers) and a 404 (it names nothing of this caller) release the key, so
 * the corrected request under the same key runs; a refusal of a request that ran is the key's answer.
 */
describe('Idempotency-Key: a refused request owns its key only once it started executing', () => {
  /** Sends `bad` then `good` under one key: the first is refused with `status`, the second runs and its retry replays. */
  async function badThenGood(
    what: string,
    send: (body: unknown, key: string) => Promise<{ status: number; text: string; headers: Headers; body: any }>,
    bad: unknown,
    good: unknown,
    expected: { bad: number; good: number },
  ) {
    const key = fixKey();
    const refused = await send(bad, key);
    assert.equal(refused.status, expected.bad, `${what} refused: ${refused.text}`);
    const ran = await send(good, key);
    assert.equal(ran.status, expected.good, `${what} corrected under the same key: ${ran.text}`);
    assert.equal(ran.headers.get('idempotent-replayed'), null, what);
    const replay = await send(good, key);
    assert.equal(replay.status, expected.good, what);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true', what);
    assert.equal(replay.text, ran.text, what);
    return ran;
  }

  test('a client that sent NUL characters retries with the corrected body under the same key, and it runs (accounts)', async () => {
    const cred = await newApp();
    const h = await getHarness();
    const send = (body: unknown, key: string) => call('/v2/accounts', { credential: cred, body, headers: { 'idempotency-key': key } });
    const externalUserId = uniqueUserId('nul');
    await badThenGood('account with NUL', send, { externalUserId: `${externalUserId}\u0000` }, { externalUserId }, { bad: 400, good: 201 });
    await badThenGood(
      'account with a NUL key in metadata',
      send,
      { externalUserId: `${externalUserId}-2`, metadata: { 'a\u0000': 1 } },
      { externalUserId: `${externalUserId}-2` },
      { bad: 400, good: 201 },
    );
    await badThenGood(
      'account with an unknown field',
      send,
      { externalUserId: `${externalUserId}-3`, nickname: 'x' },
      { externalUserId: `${externalUserId}-3` },
      { bad: 400, good: 201 },
    );
    assert.equal(await h.db.prisma.account.count({ where: { appId: cred.appId } }), 3);
  });

  test('Payments, deposit addresses, vaults and bank accounts: a body refused by validation frees its key for the corrected body', async () => {
    const m = await newMerchant();
    const payment = {
      intent: 'receive',
      amount: '10',
      assetCode: 'USDC',
      chainId: 31337,
      destination: { type: 'upa', accountId: m.accountId },
    };
    const post = (path: string) => (body: unknown, key: string) =>
      call(path, { credential: m.cred, body, headers: { 'idempotency-key': key } });
    await badThenGood('Payment without intent', post('/v2/payments'), { ...payment, intent: undefined }, payment, { bad: 400, good: 201 });
    await badThenGood('Payment with 7 decimals', post('/v2/payments'), { ...payment, amount: '10.0000001' }, payment, {
      bad: 400,
      good: 201,
    });
    await badThenGood(
      'Payment with a NUL in its description',
      post('/v2/payments'),
      { ...payment, description: 'caf\u0000e' },
      { ...payment, description: 'cafe' },
      { bad: 400, good: 201 },
    );
    await badThenGood(
      'deposit address',
      post(`/v2/accounts/${m.accountId}/deposit-addresses`),
      { chainId: '31337x' },
      { chainId: 31337 },
      { bad: 400, good: 201 },
    );
    await badThenGood('bank account', post(`/v2/accounts/${m.accountId}/bank-accounts`), { ...usBody(), accountNumber: '12ab' }, usBody(), {
      bad: 400,
      good: 201,
    });

    const holder = await newAccount(m.cred);
    await badThenGood(
      'vault',
      (body, key) => call(`/v2/accounts/${holder}/vault`, { credential: m.cred, body, headers: { 'idempotency-key': key } }),
      { policy: true },
      {},
      { bad: 400, good: 201 },
    );
    const put = (body: unknown, key: string) =>
      call(`/v2/accounts/${holder}/vault/policy`, { method: 'PUT', credential: m.cred, body, headers: { 'idempotency-key': key } });
    const email = uniqueEmail();
    await badThenGood('vault policy over the maximum limit', put, policyBody(email, '10000000001'), policyBody(email, '5000000'), {
      bad: 400,
      good: 200,
    });
  });

  test("the Vault option's authorize (client API): a body refused by validation frees the key for the corrected one", async () => {
    const v = await activeVault('100000000');
    await payTo(await newPayer(5_000_000n), v.vault.address, 5_000_000n);
    const m = await newMerchant(v.cred);
    const created = await createPayment(m, { amount: '3' });
    const p = { id: created.body.payment.id as string, secret: created.body.checkout.clientSecret as string };
    const token = (await call('/v2/client/auth/exchange', { credential: v.cred, body: { accountId: v.accountId } })).body
      .accessToken as string;
    const read = await call(`/v2/client/me/payments/${p.id}`, {
      headers: { authorization: `Bearer ${token}`, 'x-svc-payment-secret': p.secret },
    });
    const option = read.body.options.find((o: { paymentMethodType: string }) => o.paymentMethodType === 'vault');
    assert.ok(option, read.text);
    const send = (body: unknown, key: string) =>
      call(`/v2/client/me/payments/${p.id}/options/${option.id}/authorize`, {
        headers: { authorization: `Bearer ${token}`, 'x-svc-payment-secret': p.secret, 'idempotency-key': key },
        body,
      });
    const good = {
      actionId: option.execution.actionId,
      proof: { type: 'managed_authorization', authorization: 'approved' },
      metadata: { orderRef: 'A-1' },
    };
    await badThenGood('authorize with NUL in metadata', send, { ...good, metadata: { orderRef: 'A-1\u0000' } }, good, {
      bad: 400,
      good: 200,
    });
    // No money moves after the test: the vault's transfer reaches escrow and the Payment succeeds.
    await pokeScanner();
    await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
  });

  test('a 404 (an account of no one, or of another app, in the path) frees the key: the request with the right account runs under it', async () => {
    const m = await newMerchant();
    const other = await newMerchant();
    const send = (accountId: string, key: string) =>
      call(`/v2/accounts/${accountId}/deposit-addresses`, {
        credential: m.cred,
        body: { chainId: 31337, newAddress: true },
        headers: { 'idempotency-key': key },
      });
    for (const wrong of ['acct_doesnotexist0000', other.accountId]) {
      const key = fixKey();
      const missing = await send(wrong, key);
      assert.equal(missing.status, 404, missing.text);
      assert.equal((await claimOf(m.cred, key))?.state, 'released', 'no answer stored under the key');
      const ran = await send(m.accountId, key);
      assert.equal(ran.status, 201, ran.text);
    }
  });

  test('a 424 (a network the environment does not run) frees the key; a 403 (a missing scope) is answered before the key is read', async () => {
    const m = await newMerchant();
    const key = fixKey();
    const payment = {
      intent: 'receive',
      amount: '10',
      assetCode: 'USDC',
      chainId: 31337,
      destination: { type: 'upa', accountId: m.accountId },
    };
    await badThenGood(
      'Payment on an unconfigured chain',
      (body, k) => call('/v2/payments', { credential: m.cred, body, headers: { 'idempotency-key': k } }),
      { ...payment, chainId: 99999 },
      payment,
      { bad: 424, good: 201 },
    );
    const narrow = await newApp({ scopes: ['v2:accounts'] });
    const forbidden = await call('/v2/payments', { credential: narrow, body: payment, headers: { 'idempotency-key': key } });
    assert.equal(forbidden.status, 403, forbidden.text);
    assert.equal(await claimOf(narrow, key), null, 'nothing stored under the key');
  });

  test("a refusal of a request that started executing stays the key's answer: 422 (Payment, bank account) and 409 payment_not_open (client confirm)", async () => {
    const m = await newMerchant();
    const bare = (await call('/v2/accounts', { credential: m.cred, body: { externalUserId: uniqueUserId('bare') } })).body.account
      .id as string;
    const payment = { intent: 'receive', amount: '10', assetCode: 'USDC', chainId: 31337, destination: { type: 'upa', accountId: bare } };
    const key = fixKey();
    const refused = await call('/v2/payments', { credential: m.cred, body: payment, headers: { 'idempotency-key': key } });
    assert.equal(refused.status, 422, refused.text);
    assert.equal(refused.body.error.details.reasonCode, 'settlement_profile_missing');
    const corrected = await call('/v2/payments', {
      credential: m.cred,
      body: { ...payment, destination: { type: 'upa', accountId: m.accountId } },
      headers: { 'idempotency-key': key },
    });
    assert.equal(corrected.body.error.code, 'idempotency_conflict', corrected.text);
    const again = await call('/v2/payments', { credential: m.cred, body: payment, headers: { 'idempotency-key': key } });
    assert.equal(again.text, refused.text);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');

    const bankKey = fixKey();
    const france = await call(`/v2/accounts/${m.accountId}/bank-accounts`, {
      credential: m.cred,
      body: { ...usBody(), country: 'FR' },
      headers: { 'idempotency-key': bankKey },
    });
    assert.equal(france.status, 422, france.text);
    const us = await call(`/v2/accounts/${m.accountId}/bank-accounts`, {
      credential: m.cred,
      body: usBody(),
      headers: { 'idempotency-key': bankKey },
    });
    assert.equal(us.body.error.code, 'idempotency_conflict', us.text);

    // A Payment cancelled after its payer read it: the confirm ran, and its 409 is the key's answer.
    const p = (await createPayment(m)).body;
    const payer = (await call('/v2/accounts', { credential: m.cred, body: { externalUserId: uniqueUserId('payer') } })).body.account
      .id as string;
    const token = (await call('/v2/client/auth/exchange', { credential: m.cred, body: { accountId: payer } })).body.accessToken as string;
    const read = await call(`/v2/client/me/payments/${p.payment.id}`, {
      headers: { authorization: `Bearer ${token}`, 'x-svc-payment-secret': p.checkout.clientSecret },
    });
    const actionId = read.body.options[0].execution.actionId as string;
    assert.equal(
      (await call(`/v2/payments/${p.payment.id}/cancel`, { credential: m.cred, body: { reasonCode: 'abandoned' } })).status,
      200,
    );
    const confirmKey = fixKey();
    const confirm = (metadata: Record<string, string>) =>
      call(`/v2/client/me/payments/${p.payment.id}/confirm`, {
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': confirmKey },
        body: { actionId, proof: { type: 'transaction', transactionHash: `0x${'cd'.repeat(32)}` }, metadata },
      });
    const notOpen = await confirm({ try: '1' });
    assert.equal(notOpen.status, 409, notOpen.text);
    assert.equal(notOpen.body.error.code, 'payment_not_open');
    assert.equal((await confirm({ try: '2' })).body.error.code, 'idempotency_conflict');
    const replay = await confirm({ try: '1' });
    assert.equal(replay.text, notOpen.text);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  });
});
