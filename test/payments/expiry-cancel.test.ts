import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call } from '../support/api-client';
import { newPayer, payTo } from '../support/chain';
import { getHarness } from '../support/harness';
import { assertLedgerBalanced, createPayment, eventNames, getPayment, newMerchant, waitForPayment } from './fixtures';
import { endsWithBooksChecked } from '../support/books';

describe('Payment expiry', () => {
  endsWithBooksChecked();

  test('expires an unpaid Payment at expiresAt and emits payment.expired; a late payment does not revive it', async () => {
    const m = await newMerchant();
    const h = await getHarness();
    // Ten minutes, not the 24-hour maximum: the time-skipping server jumps every workflow's clock at
    // once, and a day of the suite's pollers firing is minutes of wall time (24 hours are proven alone).
    const p = (await createPayment(m, { expiresInSeconds: 600 })).body.payment;
    // Waiting on the workflow's result lets the time-skipping server jump the timer.
    const result = await h.engine.workflowResult(p.id);
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

describe('Cancel an unpaid receive Payment', () => {
  endsWithBooksChecked();

  test('cancels before any funds, and a replay returns the same Payment', async () => {
    const m = await newMerchant();
    const p = (await createPayment(m)).body.payment;
    const res = await call(`/v2/payments/${p.id}/cancel`, { credential: m.cred, body: { reasonCode: 'customer_request', reason: 'changed mind' } });
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
