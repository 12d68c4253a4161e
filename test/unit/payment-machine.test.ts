import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decideCancel,
  initialState,
  isDataHold,
  onDataError,
  onExpired,
  onOperatorResolution,
  onSettlementAttemptFailed,
  onSettlementBroadcast,
  onSettlementConfirmed,
  onSettlementTrouble,
  onTransferDetected,
  onTransfersVerified,
  pendingFundingAtomic,
  unresolvedTransfers,
  remainingAtomic,
  type PaymentState,
  type Transition,
} from '../../src/domain/payments/pure/payment-machine';

const NOW = '2026-11-22T00:00:00.000Z';
const must = (t: Transition | null): Transition => {
  assert.ok(t, 'expected a transition');
  return t;
};

function funded(amount = 10n): PaymentState {
  const seen = must(onTransferDetected(initialState('receive', amount), { key: 'a', amountAtomic: amount })).state;
  return must(onTransfersVerified(seen, [{ key: 'a', outcome: 'confirmed' }], NOW)).state;
}

describe('payment machine: funds', () => {
  test('the first transfer moves to processing and emits payment.processing; a repeat changes nothing', () => {
    const t = must(onTransferDetected(initialState('receive', 10n), { key: 'a', amountAtomic: 10n }));
    assert.equal(t.state.status, 'processing');
    assert.equal(t.state.statusVersion, 2);
    assert.deepEqual(t.events, ['payment.processing']);
    assert.equal(onTransferDetected(t.state, { key: 'a', amountAtomic: 10n }), null);
  });

  test('a transfer a reorg dropped and the chain mined again is followed again, and then counts', () => {
    const seen = must(onTransferDetected(initialState('receive', 10n), { key: 'a', amountAtomic: 10n })).state;
    const dropped = must(onTransfersVerified(seen, [{ key: 'a', outcome: 'dropped' }], NOW)).state;
    assert.equal(dropped.status, 'requires_payment_method');
    const again = must(onTransferDetected(dropped, { key: 'a', amountAtomic: 10n }));
    assert.equal(again.state.status, 'processing');
    assert.deepEqual(again.events, ['payment.processing']);
    assert.deepEqual(again.transferStatuses, [{ key: 'a', status: 'pending', role: 'funding' }]);
    assert.equal(again.state.transfers.length, 1, 'the same transfer, not a second one');
    const accepted = must(onTransfersVerified(again.state, [{ key: 'a', outcome: 'confirmed' }], NOW));
    assert.equal(accepted.state.status, 'accepted');
    assert.equal(accepted.state.confirmedAtomic, 10n);
    assert.equal(onTransferDetected(accepted.state, { key: 'a', amountAtomic: 10n }), null, 'a confirmed one is done');
  });

  test('confirmed funds reaching the amount accept the Payment, post the collection and stamp acceptedAt', () => {
    const seen = must(onTransferDetected(initialState('receive', 10n), { key: 'a', amountAtomic: 10n })).state;
    const t = must(onTransfersVerified(seen, [{ key: 'a', outcome: 'confirmed' }], NOW));
    assert.equal(t.state.status, 'accepted');
    assert.equal(t.state.statusVersion, 3);
    assert.deepEqual(t.events, ['payment.accepted']);
    assert.deepEqual(t.ledger, ['collection']);
    assert.equal(t.stamps.acceptedAt, NOW);
  });

  test('an underpayment stays processing with the remainder owed', () => {
    const seen = must(onTransferDetected(initialState('receive', 10n), { key: 'a', amountAtomic: 4n })).state;
    const t = must(onTransfersVerified(seen, [{ key: 'a', outcome: 'confirmed' }], NOW));
    assert.equal(t.state.status, 'processing');
    assert.equal(remainingAtomic(t.state), 6n);
    assert.deepEqual(t.events, []);
  });

  test('an overpayment is accepted for the exact amount and the excess becomes an incident', () => {
    const seen = must(onTransferDetected(initialState('receive', 10n), { key: 'a', amountAtomic: 12n })).state;
    const t = must(onTransfersVerified(seen, [{ key: 'a', outcome: 'confirmed' }], NOW));
    assert.equal(t.state.status, 'accepted');
    assert.equal(t.state.confirmedAtomic, 10n);
    // The transfer that crosses the amount pays it; the rest of that transfer is the excess.
    assert.deepEqual(t.incidents, [{ kind: 'excess', amountAtomic: 2n, transferKey: 'a' }]);
  });

  test('funds still confirming when the Payment is accepted become excess once confirmed, and nothing once dropped', () => {
    const first = must(onTransferDetected(initialState('receive', 10n), { key: 'a', amountAtomic: 10n })).state;
    const both = must(onTransferDetected(first, { key: 'b', amountAtomic: 5n })).state;
    const accepted = must(
      onTransfersVerified(
        both,
        [
          { key: 'a', outcome: 'confirmed' },
          { key: 'b', outcome: 'pending' },
        ],
        NOW,
      ),
    );
    assert.equal(accepted.state.status, 'accepted');
    assert.deepEqual(accepted.incidents, []);
    assert.deepEqual(
      unresolvedTransfers(accepted.state).map((t) => t.key),
      ['b'],
    );
    const excess = must(onTransfersVerified(accepted.state, [{ key: 'b', outcome: 'confirmed' }], NOW));
    assert.deepEqual(excess.incidents, [{ kind: 'excess', amountAtomic: 5n, transferKey: 'b' }]);
    assert.deepEqual(excess.transferStatuses, [{ key: 'b', status: 'confirmed', role: 'excess' }]);
    assert.equal(excess.state.confirmedAtomic, 10n);
    const dropped = must(onTransfersVerified(accepted.state, [{ key: 'b', outcome: 'dropped' }], NOW));
    assert.deepEqual(dropped.incidents, []);
    assert.deepEqual(unresolvedTransfers(dropped.state), []);
  });

  test('seen funding counts against what is still owed, so the payer is not asked for it again', () => {
    const seen = must(onTransferDetected(initialState('receive', 10n), { key: 'a', amountAtomic: 10n })).state;
    assert.equal(pendingFundingAtomic(seen), 10n);
    assert.equal(pendingFundingAtomic(must(onTransfersVerified(seen, [{ key: 'a', outcome: 'confirmed' }], NOW)).state), 0n);
  });

  test('a transfer dropped from the canonical chain does not count, and the Payment waits for funds again', () => {
    const seen = must(onTransferDetected(initialState('receive', 10n), { key: 'a', amountAtomic: 10n })).state;
    const t = must(onTransfersVerified(seen, [{ key: 'a', outcome: 'dropped' }], NOW));
    assert.equal(t.state.status, 'requires_payment_method');
    assert.equal(t.state.statusVersion, 3);
    assert.equal(t.state.confirmedAtomic, 0n);
    assert.deepEqual(t.events, ['payment.requires_action']);
  });

  test('a transfer after acceptance is a duplicate, held for recovery once it is confirmed', () => {
    const seen = must(onTransferDetected(funded(), { key: 'b', amountAtomic: 10n }));
    assert.equal(seen.state.status, 'accepted');
    assert.equal(seen.statusChanged, false);
    assert.deepEqual(seen.events, []);
    assert.deepEqual(seen.incidents, [], 'nothing is held for a transfer that may still be reorged away');
    const t = must(onTransfersVerified(seen.state, [{ key: 'b', outcome: 'confirmed' }], NOW));
    assert.deepEqual(t.events, ['payment.duplicate_received']);
    assert.deepEqual(t.incidents, [{ kind: 'duplicate', amountAtomic: 10n, transferKey: 'b' }]);
  });
});

describe('payment machine: expiry and cancel', () => {
  test('expiry is terminal and later funds are late, not counted', () => {
    const expired = must(onExpired(initialState('receive', 10n)));
    assert.equal(expired.state.status, 'expired');
    assert.deepEqual(expired.events, ['payment.expired']);
    const seen = must(onTransferDetected(expired.state, { key: 'a', amountAtomic: 10n }));
    assert.deepEqual(seen.events, []);
    const late = must(onTransfersVerified(seen.state, [{ key: 'a', outcome: 'confirmed' }], NOW));
    assert.equal(late.state.status, 'expired');
    assert.deepEqual(late.events, ['payment.late_received']);
    assert.deepEqual(late.incidents, [{ kind: 'late', amountAtomic: 10n, transferKey: 'a' }]);
    assert.equal(late.state.confirmedAtomic, 0n);
    assert.equal(late.state.statusVersion, expired.state.statusVersion);
  });

  test('a Payment whose funds are still confirming does not expire', () => {
    const seen = must(onTransferDetected(initialState('receive', 10n), { key: 'a', amountAtomic: 10n })).state;
    assert.equal(onExpired(seen), null);
  });

  test('an underpaid Payment expires with the received amount held for recovery', () => {
    const seen = must(onTransferDetected(initialState('receive', 10n), { key: 'a', amountAtomic: 4n })).state;
    const partial = must(onTransfersVerified(seen, [{ key: 'a', outcome: 'confirmed' }], NOW)).state;
    const t = must(onExpired(partial));
    assert.deepEqual(t.incidents, [{ kind: 'underpaid_expired', amountAtomic: 4n, transferKey: null }]);
  });

  test('cancel works before funds, replays as already cancelled, and is refused after funds or for a send Payment', () => {
    const d = decideCancel(initialState('receive', 10n), 'customer_request', null, NOW);
    assert.equal(d.outcome, 'cancelled');
    assert.ok(d.outcome === 'cancelled' && d.transition.state.status === 'cancelled' && d.transition.stamps.cancelledAt === NOW);
    if (d.outcome === 'cancelled') assert.equal(decideCancel(d.transition.state, 'other', null, NOW).outcome, 'already_cancelled');
    const seen = must(onTransferDetected(initialState('receive', 10n), { key: 'a', amountAtomic: 1n })).state;
    assert.deepEqual(decideCancel(seen, 'other', null, NOW), {
      outcome: 'refused',
      reasonCode: 'not_open',
      message: 'A processing Payment cannot be cancelled',
    });
    assert.equal((decideCancel(initialState('send', 10n), 'other', null, NOW) as { reasonCode: string }).reasonCode, 'send_payment');
  });
});

describe('payment machine: settlement', () => {
  test('failed attempts retry until the budget is spent, then hold for intervention', () => {
    let s = funded();
    const first = onSettlementAttemptFailed(s, { maxAttempts: 3 });
    assert.equal(first.state.operationalState, 'retrying');
    assert.equal(first.state.operationalReasonCode, 'settlement_failed');
    s = onSettlementAttemptFailed(first.state, { maxAttempts: 3 }).state;
    const held = onSettlementAttemptFailed(s, { maxAttempts: 3 });
    assert.equal(held.state.operationalState, 'requires_intervention');
    assert.equal(held.state.operationalReasonCode, 'settlement_requires_intervention');
    assert.deepEqual(held.events, ['payment.requires_intervention']);
    assert.equal(held.state.status, 'accepted', 'financial status preserved');
  });

  test('a confirmed settlement succeeds, clears retrying and posts the settlement', () => {
    const retrying = onSettlementAttemptFailed(funded(), { maxAttempts: 3 }).state;
    const broadcast = onSettlementBroadcast(retrying, '0xabc');
    assert.equal(broadcast.state.operationalState, 'normal');
    assert.equal(broadcast.state.stage, 'settlement_broadcast');
    const done = onSettlementConfirmed(broadcast.state, '0xabc', NOW);
    assert.equal(done.state.status, 'succeeded');
    assert.equal(done.state.statusVersion, 4);
    assert.deepEqual(done.ledger, ['settlement']);
    assert.deepEqual(done.events, ['payment.succeeded']);
  });

  test('reverted or unconfirmed settlements hold with their reason codes', () => {
    assert.equal(onSettlementTrouble(funded(), 'settlement_failed').state.operationalReasonCode, 'settlement_failed');
    assert.equal(onSettlementTrouble(funded(), 'settlement_unconfirmed').state.operationalReasonCode, 'settlement_unconfirmed');
  });

  test('operator resolutions: retry settles again, mark-settled (the net paid by hand) settles the rest, fail fails; nothing without a hold', () => {
    const held = onSettlementTrouble(funded(), 'settlement_unconfirmed').state;
    const retry = onOperatorResolution(held, { action: 'retry' });
    assert.equal(retry?.next, 'settle');
    assert.equal(retry?.transition.state.operationalState, 'normal');
    const marked = onOperatorResolution(
      { ...held, settlementAttempts: 3, settlementTxHash: '0xold' },
      { action: 'mark-settled', txHash: '0x1' },
    );
    assert.equal(marked?.next, 'settle');
    assert.equal(marked?.transition.state.status, 'accepted', 'it succeeds once the fees are paid too');
    assert.equal(marked?.transition.state.stage, 'settlement_pending');
    assert.equal(marked?.transition.state.operationalState, 'normal');
    assert.equal(marked?.transition.state.settlementAttempts, 0, 'a fresh budget');
    assert.equal(marked?.transition.state.settlementTxHash, null);
    assert.deepEqual(marked?.transition.events, []);
    const failed = onOperatorResolution(held, { action: 'fail', reason: 'refunded' });
    assert.equal(failed?.transition.state.status, 'failed');
    assert.deepEqual(failed?.transition.failure, { code: 'operator_failed', message: 'refunded' });
    assert.equal(onOperatorResolution(funded(), { action: 'retry' }), null);
  });
});

describe('Payment held by a data error (a write the database refused)', () => {
  test('holds in requires_intervention with reason data_error and payment.requires_intervention, keeping the financial status', () => {
    const open = initialState('receive', 10n);
    const t = must(onDataError(open));
    assert.equal(t.state.status, 'requires_payment_method');
    assert.equal(t.state.statusVersion, open.statusVersion);
    assert.equal(t.state.operationalState, 'requires_intervention');
    assert.equal(t.state.operationalReasonCode, 'data_error');
    assert.deepEqual(t.events, ['payment.requires_intervention']);
    assert.ok(isDataHold(t.state));
    // Already held: nothing new (no second event).
    assert.equal(onDataError(t.state), null);
  });

  test('retry releases the hold and resumes from the stored state (no settlement reset for an open Payment)', () => {
    const held = must(onDataError(initialState('receive', 10n))).state;
    const resolved = onOperatorResolution(held, { action: 'retry' });
    assert.ok(resolved);
    assert.equal(resolved.transition.state.operationalState, 'normal');
    assert.equal(resolved.transition.state.operationalReasonCode, null);
    assert.equal(resolved.transition.state.status, 'requires_payment_method');
    assert.equal(resolved.transition.state.stage, 'awaiting_funds');
    assert.deepEqual(resolved.transition.events, []);
  });

  test('a cancel of a Payment held by a data error cancels it and ends the hold', () => {
    const held = must(onDataError(initialState('receive', 10n))).state;
    const decision = decideCancel(held, 'customer_request', null, NOW);
    assert.equal(decision.outcome, 'cancelled');
    assert.ok(decision.outcome === 'cancelled');
    assert.equal(decision.transition.state.status, 'cancelled');
    assert.equal(decision.transition.state.operationalState, 'normal');
    assert.deepEqual(decision.transition.events, ['payment.cancelled']);
  });
});
