import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ZPaymentResponse } from '../../src/domain/payments/payment.schemas';
import { call } from '../support/api-client';
import { eventually, mine, newPayer, payTo, setTreasuryGas } from '../support/chain';
import { getHarness } from '../support/harness';
import { endsWithBooksChecked } from '../support/books';
import { runCli as cli } from '../deposits/helpers';
import { createPayment, getPayment, newMerchant, waitForPayment } from '../support/fixtures';

/** GET /v2/payments/{id}, checked against the advertised schema (the nextAction union among it). */
async function read(m: Awaited<ReturnType<typeof newMerchant>>, paymentId: string) {
  const body = await getPayment(m, paymentId);
  ZPaymentResponse.parse(body);
  return body;
}

describe('nextAction through GET /v2/payments/{paymentId}', () => {
  endsWithBooksChecked();

  test('open: transaction with the deposit instructions; cancelled: null', async () => {
    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '2' })).body.payment;
    const open = await read(m, p.id);
    assert.equal(open.nextAction.type, 'transaction');
    assert.deepEqual(open.nextAction.depositInstructions, p.funding.depositAddress);
    assert.equal(open.nextAction.expiresAt, p.expiresAt);
    const cancelled = await call(`/v2/payments/${p.id}/cancel`, { credential: m.cred, body: { reasonCode: 'abandoned' } });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.nextAction, null);
    const after = await read(m, p.id);
    assert.equal(after.payment.status, 'cancelled');
    assert.equal(after.nextAction, null);
  });

  test('funds seen and confirming: none until the Payment expiry; succeeded: null', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '2' })).body.payment;
    const payer = await newPayer(2_000_000n);
    // One block deep of the two the network needs: seen, not confirmed (nothing mines more).
    await payTo(payer, p.funding.depositAddress.address, 2_000_000n);
    await eventually(async () => (await getPayment(m, p.id)).payment.status === 'processing', 'processing', { mine: false });
    await eventually(
      async () => (await h.db.prisma.payment.findUniqueOrThrow({ where: { id: p.id } })).pendingAtomic.toFixed() !== '0',
      'the transfer counted as confirming',
      { mine: false },
    );
    const seen = await read(m, p.id);
    assert.equal(seen.payment.status, 'processing');
    assert.deepEqual(seen.nextAction, { id: seen.nextAction.id, type: 'none', expiresAt: p.expiresAt, depositInstructions: null });
    await mine(1);
    await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal((await read(m, p.id)).nextAction, null);
  });

  test('held for an operator: waiting_for_review, to the partner and to the payer; released and succeeded: null', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    // Short backoffs: the hold is what is tested, not the pacing of the attempts before it.
    h.policies.payment = { retryBackoffSeconds: 0.2 };
    let created;
    try {
      created = (await createPayment(m, { amount: '2' })).body;
    } finally {
      delete h.policies.payment;
    }
    const p = created.payment;
    const payer = await newPayer(2_000_000n);
    await setTreasuryGas(0n);
    try {
      await payTo(payer, p.funding.depositAddress.address, 2_000_000n);
      await waitForPayment(m, p.id, 'requires_intervention', (x) => x.operationalState === 'requires_intervention');
      const held = await read(m, p.id);
      assert.equal(held.payment.status, 'accepted');
      assert.deepEqual(held.nextAction, {
        id: held.nextAction.id,
        type: 'waiting_for_review',
        expiresAt: null,
        depositInstructions: null,
        reasonCode: 'settlement_requires_intervention',
      });
      // The client API answers its payer the same variant (one function for both).
      const payerAccount = await call('/v2/accounts', { credential: m.cred, body: { externalUserId: `payer-${p.id}` } });
      const token = await call('/v2/client/auth/exchange', { credential: m.cred, body: { accountId: payerAccount.body.account.id } });
      const client = await call(`/v2/client/me/payments/${p.id}`, {
        headers: { authorization: `Bearer ${token.body.accessToken}`, 'x-svc-payment-secret': created.checkout.clientSecret },
      });
      assert.equal(client.status, 200, client.text);
      assert.deepEqual(client.body.nextAction, held.nextAction);
    } finally {
      await setTreasuryGas(100n * 10n ** 18n);
    }
    await cli(['payments', 'resolve', p.id, '--action', 'retry', '--actor', 'ops@example', '--reason', 'treasury refilled']);
    await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal((await read(m, p.id)).nextAction, null);
  });
});
