import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  awaitsPayout,
  initialState,
  onOperatorResolution,
  onTransferDetected,
  onTransfersVerified,
  type OfframpStatus,
  type PaymentState,
  type Transition,
} from '../../src/domain/payments/pure/payment-machine';
import { onPayoutHeld, onPayoutUpdate, onProviderFunded } from '../../src/domain/payments/pure/payout-machine';

const CREATED = '2026-11-23T00:00:00.000Z';
const BEFORE_EXPIRY = '2026-11-23T00:05:00.000Z';
const QUOTE_EXPIRES = '2026-11-23T00:10:00.000Z';
const AFTER_EXPIRY = '2026-11-23T00:10:00.001Z';
const REFUND = '0xrefund';

function bankPayment(): PaymentState {
  return { ...initialState('send', 100n), payout: { quoteExpiresAt: QUOTE_EXPIRES, offrampStatus: null, refundTxHash: null } };
}

const apply = (s: PaymentState, t: Transition | null) => (t ? t.state : s);

/** Funded, confirmed at `at`, and (when the quote held) settled to the provider. */
function funded(at = BEFORE_EXPIRY): { state: PaymentState; verified: Transition } {
  let s = apply(bankPayment(), onTransferDetected(bankPayment(), { key: '1:0xfund:0xescrow:0', amountAtomic: 100n, txHash: '0xfund' }));
  const verified = onTransfersVerified(s, [{ key: '1:0xfund:0xescrow:0', outcome: 'confirmed' }], at)!;
  s = verified.state;
  return { state: s, verified };
}

function atProvider(): PaymentState {
  return onProviderFunded(funded().state, '0xsettle').state;
}

const update = (status: OfframpStatus, refundTxHash: string | null = null) => ({
  status,
  reasonCode: status === 'failed' ? 'R01' : null,
  refundTxHash,
});

describe('the payout machine', () => {
  test('funds confirmed before the quote expires are accepted and settled to the provider, which does not yet succeed the Payment', () => {
    const { verified } = funded();
    assert.equal(verified.state.status, 'accepted');
    assert.deepEqual(verified.ledger, ['collection']);
    const t = onProviderFunded(verified.state, '0xsettle');
    assert.equal(t.state.status, 'accepted');
    assert.equal(t.state.stage, 'settlement_confirmed');
    assert.deepEqual(t.events, []);
    assert.deepEqual(t.ledger, ['settlement']);
    assert.equal(awaitsPayout(t.state), true);
  });

  test('funds confirmed once the quote has lapsed fail the Payment with payment_quote_expired and are held, nothing is settled', () => {
    const { verified } = funded(AFTER_EXPIRY);
    assert.equal(verified.state.status, 'failed');
    assert.deepEqual(verified.failure, { code: 'payment_quote_expired', message: verified.failure!.message });
    assert.deepEqual(verified.events, ['payment.failed']);
    assert.deepEqual(verified.ledger, []);
    assert.deepEqual(verified.incidents, [{ kind: 'quote_expired', amountAtomic: 100n, transferKey: null }]);
  });

  test("the quote lapses on the Payment's own clock: a sandbox clock moved past it fails funds confirmed before it in real time, and stamps nothing with the moved time", () => {
    const s = apply(bankPayment(), onTransferDetected(bankPayment(), { key: 'k', amountAtomic: 100n, txHash: '0xfund' }));
    const moved = onTransfersVerified(s, [{ key: 'k', outcome: 'confirmed' }], BEFORE_EXPIRY, AFTER_EXPIRY)!;
    assert.equal(moved.failure?.code, 'payment_quote_expired');
    const held = onTransfersVerified(s, [{ key: 'k', outcome: 'confirmed' }], BEFORE_EXPIRY, BEFORE_EXPIRY)!;
    assert.equal(held.state.status, 'accepted');
    assert.equal(held.stamps.acceptedAt, BEFORE_EXPIRY);
  });

  test('a upa Payment ignores quotes: the same funds are accepted whatever the time', () => {
    let s = initialState('send', 100n);
    s = onTransferDetected(s, { key: 'k', amountAtomic: 100n })!.state;
    assert.equal(onTransfersVerified(s, [{ key: 'k', outcome: 'confirmed' }], AFTER_EXPIRY)!.state.status, 'accepted');
  });

  test('submitted -> processing -> completed: succeeded with payment.succeeded and bank_funding.completed, and the payout posting', () => {
    let s = atProvider();
    const submitted = onPayoutUpdate(s, update('submitted'), CREATED)!;
    assert.equal(submitted.state.payout!.offrampStatus, 'submitted');
    assert.equal(submitted.statusChanged, false);
    s = submitted.state;
    s = onPayoutUpdate(s, update('processing'), CREATED)!.state;
    assert.equal(onPayoutUpdate(s, update('submitted'), CREATED), null, 'an update never moves the payout back');
    const completed = onPayoutUpdate(s, update('completed'), CREATED)!;
    assert.equal(completed.state.status, 'succeeded');
    assert.equal(completed.state.payout!.offrampStatus, 'completed');
    assert.deepEqual(completed.events, ['payment.succeeded', 'bank_funding.completed']);
    assert.deepEqual(completed.ledger, ['payout']);
    assert.equal(completed.stamps.succeededAt, CREATED);
    assert.equal(onPayoutUpdate(completed.state, update('completed'), CREATED), null, 'a repeated update changes nothing');
  });

  test('a failed payout fails the Payment (provider_failure, bank_funding.failed) and its refund to escrow is held for recovery', () => {
    const failed = onPayoutUpdate(atProvider(), update('failed', REFUND), CREATED)!;
    assert.equal(failed.state.status, 'failed');
    assert.equal(failed.failure!.code, 'provider_failure');
    assert.match(failed.failure!.message, /R01/);
    assert.deepEqual(failed.events, ['payment.failed', 'bank_funding.failed']);
    assert.deepEqual(failed.ledger, []);
    assert.equal(onPayoutUpdate(failed.state, update('completed'), CREATED), null, 'a failed payout is final');
    const seen = onTransferDetected(failed.state, { key: `1:${REFUND}:0xescrow:0`, amountAtomic: 95n, txHash: REFUND })!;
    assert.equal(seen.state.transfers.at(-1)!.role, 'refund');
    assert.deepEqual(seen.events, [], 'a refund is not a late payment');
    const confirmed = onTransfersVerified(seen.state, [{ key: `1:${REFUND}:0xescrow:0`, outcome: 'confirmed' }], CREATED)!;
    assert.deepEqual(confirmed.incidents, [{ kind: 'payout_refund', amountAtomic: 95n, transferKey: `1:${REFUND}:0xescrow:0` }]);
    assert.deepEqual(confirmed.events, []);
  });

  test('a refund seen before the provider names it becomes the refund once it does', () => {
    const s = onTransferDetected(atProvider(), { key: `1:${REFUND}:0xescrow:0`, amountAtomic: 95n, txHash: REFUND })!.state;
    assert.equal(s.transfers.at(-1)!.role, 'duplicate');
    const failed = onPayoutUpdate(s, update('failed', REFUND), CREATED)!;
    assert.deepEqual(failed.transferStatuses, [{ key: `1:${REFUND}:0xescrow:0`, status: 'pending', role: 'refund' }]);
  });

  test('a payout returned after success keeps the Payment succeeded, fires payment.settlement_returned and reverses the payout', () => {
    const completed = onPayoutUpdate(atProvider(), update('completed'), CREATED)!.state;
    const returned = onPayoutUpdate(completed, update('returned', REFUND), CREATED)!;
    assert.equal(returned.state.status, 'succeeded');
    assert.equal(returned.statusChanged, false);
    assert.equal(returned.state.operationalReasonCode, 'settlement_returned');
    assert.deepEqual(returned.events, ['payment.settlement_returned']);
    assert.deepEqual(returned.ledger, ['payout_returned']);
    assert.equal(returned.state.payout!.refundTxHash, REFUND);
    assert.equal(onPayoutUpdate(returned.state, update('returned', REFUND), CREATED), null);
    assert.equal(onPayoutUpdate(atProvider(), update('returned', REFUND), CREATED), null, 'only a completed payout comes back');
  });

  test('uncertainty holds the Payment until a state is learned; an operator retry asks the provider again', () => {
    const held = onPayoutHeld(atProvider(), 'provider_state_uncertain')!;
    assert.equal(held.state.operationalState, 'requires_intervention');
    assert.equal(held.state.operationalReasonCode, 'provider_state_uncertain');
    assert.deepEqual(held.events, ['payment.requires_intervention']);
    assert.equal(onPayoutHeld(held.state, 'provider_state_uncertain'), null);
    const learned = onPayoutUpdate(held.state, update('processing'), CREATED)!;
    assert.equal(learned.state.operationalState, 'normal');
    assert.equal(learned.state.operationalReasonCode, null);
    const retried = onOperatorResolution(held.state, { action: 'retry' })!;
    assert.equal(retried.next, 'payout');
    assert.equal(retried.transition.state.stage, 'settlement_confirmed', 'nothing is settled again');
    assert.equal(onOperatorResolution(held.state, { action: 'mark-settled', txHash: '0x1' }), null);
    const failed = onOperatorResolution(held.state, { action: 'fail', reason: 'lost at the provider' })!;
    assert.equal(failed.transition.state.status, 'failed');
  });

  test('a refused payout holds the Payment for an operator (provider_failure)', () => {
    const held = onPayoutHeld(atProvider(), 'provider_failure')!;
    assert.equal(held.state.operationalReasonCode, 'provider_failure');
    assert.equal(held.state.status, 'accepted');
  });

  test('property: statusVersion rises by one per status change, succeeded is never left, and the payout never moves back', () => {
    const statuses: OfframpStatus[] = ['submitted', 'processing', 'completed', 'failed', 'returned'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...statuses), { maxLength: 12 }), (seq) => {
        let s = atProvider();
        for (const status of seq) {
          const before = s;
          const t = onPayoutUpdate(s, update(status, REFUND), CREATED);
          if (!t) continue;
          s = t.state;
          assert.equal(s.statusVersion, before.statusVersion + (t.statusChanged ? 1 : 0));
          if (before.status === 'succeeded') assert.equal(s.status, 'succeeded');
          if (before.status === 'failed') assert.fail('a failed payout took an update');
        }
      }),
    );
  });
});
