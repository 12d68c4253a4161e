import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call } from '../support/api-client';
import { mine, newPayer, payTo } from '../support/chain';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import type { Address } from 'viem';
import { getHarness } from '../support/harness';
import { assertLedgerBalanced, createPayment, eventNames, getPayment, newMerchant, waitForPayment } from '../support/fixtures';
import { endsWithBooksChecked } from '../support/books';
import { apiWithUpdateTimeout, withWorkerStopped } from '../support/bounded-api';
import { awaitWorkflowResult } from '../support/workflow-result';

describe('Payment expiry', () => {
  endsWithBooksChecked();

  test('expires an unpaid Payment at expiresAt and emits payment.expired; a late payment does not revive it', async () => {
    const m = await newMerchant();
    const h = await getHarness();
    // Ten minutes, not the 24-hour maximum: the time-skipping server jumps every workflow's clock at
    // once, and a day of the suite's pollers firing is minutes of wall time (24 hours are proven alone).
    const p = (await createPayment(m, { expiresInSeconds: 600 })).body.payment;
    // Waiting on the workflow's result lets the time-skipping server jump the timer.
    const result = await awaitWorkflowResult(h, p.id);
    assert.deepEqual(result, { status: 'expired', statusVersion: 2 });
    const expired = await getPayment(m, p.id);
    assert.equal(expired.payment.status, 'expired');
    assert.equal(expired.payment.statusVersion, 2);
    assert.equal(expired.nextAction, null);
    assert.deepEqual(await eventNames(p.id), ['payment.created', 'payment.expired']);

    const payer = await newPayer(10_000_000n);
    await payTo(payer, p.funding.depositAddress.address, 10_000_000n);
    const late = await waitForPayment(m, p.id, 'late funds recorded', (x) => x.incidentRecoverySummary.count === 1);
    assert.equal(late.status, 'expired');
    assert.equal(late.statusVersion, 2);
    assert.equal(late.incidentRecoverySummary.pendingCount, 1);
    assert.equal(late.incidentRecoverySummary.requestedAmountAtomic, '10000000');
    assert.deepEqual(await eventNames(p.id), ['payment.created', 'payment.expired', 'payment.late_received']);
    await assertLedgerBalanced();
  });
});

describe('Expiry waits for the chain to be read', () => {
  endsWithBooksChecked();

  test('funds sent before expiresAt while the scanner is behind count for the Payment (underpaid, then expired), never as late', async () => {
    const m = await newMerchant();
    const h = await getHarness();
    const p = (await createPayment(m, { amount: '10', expiresInSeconds: 60 })).body.payment;
    const payer = await newPayer(4_000_000n);
    // Sent and mined, but the scanner is not woken: when expiresAt comes it has not read this block.
    const chain = h.chain.chains.get(h.chainId);
    const txHash = await chain.sendTokenTransfer({
      from: payer,
      token: SANDBOX_TOKEN_ADDRESS,
      to: p.funding.depositAddress.address as Address,
      amountAtomic: 4_000_000n,
    });
    await mine(2);
    assert.equal(await chain.getTransactionStatus(txHash, 1), 'confirmed');
    const result = await awaitWorkflowResult<{ status: string }>(h, p.id);
    assert.equal(result.status, 'expired');
    const names = await eventNames(p.id);
    assert.ok(!names.includes('payment.late_received'), `events: ${names.join(', ')}`);
    assert.equal(names.at(-1), 'payment.expired', `events: ${names.join(', ')}`);
    const expired = await getPayment(m, p.id);
    assert.equal(expired.payment.incidentRecoverySummary.requestedAmountAtomic, '4000000');
    await assertLedgerBalanced();
  });
});

describe('Cancel an unpaid receive Payment', () => {
  endsWithBooksChecked();

  test('cancels before any funds, and a replay returns the same Payment', async () => {
    const m = await newMerchant();
    const p = (await createPayment(m)).body.payment;
    const res = await call(`/v2/payments/${p.id}/cancel`, {
      credential: m.cred,
      body: { reasonCode: 'customer_request', reason: 'changed mind' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.payment.status, 'cancelled');
    assert.equal(res.body.payment.statusVersion, 2);
    assert.ok(res.body.payment.cancelledAt);
    assert.equal(res.body.nextAction, null);
    const replay = await call(`/v2/payments/${p.id}/cancel`, { credential: m.cred, body: { reasonCode: 'customer_request' } });
    assert.equal(replay.status, 200);
    assert.deepEqual(replay.body.payment, res.body.payment);
    assert.deepEqual(await eventNames(p.id), ['payment.created', 'payment.cancelled']);
  });

  test('refuses to cancel once funds were detected, with 409 payment_not_cancelable', async () => {
    const m = await newMerchant();
    const p = (await createPayment(m)).body.payment;
    const payer = await newPayer(3_000_000n);
    await payTo(payer, p.funding.depositAddress.address, 3_000_000n);
    await waitForPayment(m, p.id, 'processing', (x) => x.status === 'processing');
    const res = await call(`/v2/payments/${p.id}/cancel`, { credential: m.cred, body: { reasonCode: 'abandoned' } });
    assert.equal(res.status, 409);
    assert.equal(res.body.error.code, 'payment_not_cancelable');
    assert.equal(res.body.error.details.reasonCode, 'not_open');
    assert.equal((await getPayment(m, p.id)).payment.status, 'processing');
  });

  test('refuses to cancel a send Payment', async () => {
    const m = await newMerchant();
    const sender = await call('/v2/accounts', { credential: m.cred, body: { externalUserId: `sender-${Date.now()}` } });
    const p = await createPayment(m, { intent: 'send', sourceAccountId: sender.body.account.id });
    assert.equal(p.status, 201, p.text);
    assert.deepEqual(p.body.payment.participants, [
      { role: 'sender', accountId: sender.body.account.id },
      { role: 'recipient', accountId: m.accountId },
    ]);
    const res = await call(`/v2/payments/${p.body.payment.id}/cancel`, { credential: m.cred, body: { reasonCode: 'other' } });
    assert.equal(res.status, 409);
    assert.equal(res.body.error.details.reasonCode, 'send_payment');
  });

  test('a cancel the engine cannot answer in time is 503 service_unavailable with Retry-After and releases its key; the retry succeeds once the worker is back', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = (await createPayment(m)).body.payment;
    const api = await apiWithUpdateTimeout(1000);
    // The 503 comes from an API whose updates wait 1 s; the retry goes to the suite's API (its own
    // deadline), as a busy machine's restarted worker may take more than a second to answer.
    const cancel = (baseUrl?: string) =>
      call(`/v2/payments/${p.id}/cancel`, {
        credential: m.cred,
        body: { reasonCode: 'customer_request' },
        headers: { 'idempotency-key': 'cancel-1' },
        ...(baseUrl ? { baseUrl } : {}),
      });
    try {
      const unavailable = await withWorkerStopped(() => cancel(api.baseUrl));
      assert.equal(unavailable.status, 503, unavailable.text);
      assert.equal(unavailable.body.error.code, 'service_unavailable');
      assert.equal(typeof unavailable.body.error.message, 'string');
      assert.match(unavailable.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);
      // The 5xx released the key: the retry runs again instead of replaying the 503.
      const released = await h.db.prisma.idempotencyRecord.findUnique({ where: { appId_key: { appId: m.cred.appId, key: 'cancel-1' } } });
      assert.equal(released?.state, 'released');
      const retried = await cancel();
      assert.equal(retried.status, 200, retried.text);
      assert.equal(retried.body.payment.status, 'cancelled');
      assert.equal(retried.headers.get('idempotent-replayed'), null);
    } finally {
      await api.close();
    }
    assert.deepEqual(await eventNames(p.id), ['payment.created', 'payment.cancelled']);
  });

  test('a cancel the database refuses for its data holds the Payment in requires_intervention with its event, and the Payment can still be cancelled', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = (await createPayment(m)).body.payment;
    // A value the API accepts but the database refuses (SQLSTATE 23514), for this test's Payment only.
    const poison = `poison-${p.id}`;
    const constraint = `test_refuses_${p.id}`.toLowerCase();
    await h.db.prisma.$executeRawUnsafe(
      `ALTER TABLE payments ADD CONSTRAINT "${constraint}" CHECK (cancel_reason IS DISTINCT FROM '${poison}') NOT VALID`,
    );
    try {
      const refused = await call(`/v2/payments/${p.id}/cancel`, { credential: m.cred, body: { reasonCode: 'other', reason: poison } });
      assert.equal(refused.status, 500, refused.text);
      assert.equal(refused.body.error.code, 'internal_error');
      const held = await waitForPayment(m, p.id, 'held for the refused write', (x) => x.operationalState === 'requires_intervention');
      assert.equal(held.status, 'requires_payment_method');
      const row = await h.db.prisma.payment.findUniqueOrThrow({ where: { id: p.id } });
      assert.equal(row.operationalReasonCode, 'data_error');
      assert.deepEqual(await eventNames(p.id), ['payment.created', 'payment.requires_intervention']);
      // Nothing retries it: the workflow waits for an operator, with no activity pending.
      assert.deepEqual(await h.engine.pendingActivities(p.id), []);
    } finally {
      await h.db.prisma.$executeRawUnsafe(`ALTER TABLE payments DROP CONSTRAINT "${constraint}"`);
    }
    const cancelled = await call(`/v2/payments/${p.id}/cancel`, {
      credential: m.cred,
      body: { reasonCode: 'customer_request', reason: 'changed mind' },
    });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.payment.status, 'cancelled');
    assert.equal(cancelled.body.payment.operationalState, 'normal');
    assert.deepEqual(await eventNames(p.id), ['payment.created', 'payment.requires_intervention', 'payment.cancelled']);
    assert.deepEqual(await awaitWorkflowResult(h, p.id), { status: 'cancelled', statusVersion: 2 });
  });

  test('validates the cancel body', async () => {
    const m = await newMerchant();
    const p = (await createPayment(m)).body.payment;
    const res = await call(`/v2/payments/${p.id}/cancel`, { credential: m.cred, body: { reasonCode: 'bored' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.details.fields[0].field, 'body.reasonCode');
  });
});

describe('Send Payment', () => {
  endsWithBooksChecked();

  test("a send Payment funded by the sender settles to the recipient's destination", async () => {
    const m = await newMerchant();
    const sender = await call('/v2/accounts', { credential: m.cred, body: { externalUserId: `payer-${Date.now()}` } });
    const p = (await createPayment(m, { intent: 'send', sourceAccountId: sender.body.account.id, amount: '4' })).body.payment;
    const payer = await newPayer(4_000_000n);
    await payTo(payer, p.funding.depositAddress.address, 4_000_000n);
    const done = await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal(done.intent, 'send');
    const sent = await call(`/v2/accounts/${sender.body.account.id}/transactions?paymentId=${p.id}`, { credential: m.cred });
    assert.equal(sent.body.transactions[0].direction, 'sent');
    await assertLedgerBalanced();
  });
});
