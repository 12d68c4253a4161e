import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  awaitsPayout,
  decideCancel,
  initialState,
  isDataHold,
  isOpen,
  isTerminal,
  nextStep,
  onDataError,
  onExpired,
  onSettlementConfirmed,
  onSettlementTrouble,
  onTransferDetected,
  onTransfersVerified,
  unresolvedTransfers,
  type PaymentRunView,
  type PaymentState,
  type PaymentStatus,
  type PaymentStep,
  type Transition,
} from '../../src/domain/payments/pure/payment-machine';
import { onPayoutHeld, onProviderFunded } from '../../src/domain/payments/pure/payout-machine';

/**
 * nextStep: what the PaymentWorkflow does next (workflows/payment.ts carries out each answer). The
 * examples walk the lifecycle; the properties hold for every state and view, reachable or not.
 */

const NOW = '2026-11-27T00:00:00.000Z';
const NOW_MS = Date.parse(NOW);
/** Open, nothing queued, expiry an hour away, chain not yet read through it, a short run. */
const view = (over: Partial<PaymentRunView> = {}): PaymentRunView => ({
  queued: 0,
  nowMs: NOW_MS,
  expiresAtMs: NOW_MS + 3_600_000,
  chainReadThroughExpiry: false,
  runIsLong: false,
  ...over,
});
const must = (t: Transition | null): PaymentState => {
  assert.ok(t, 'expected a transition');
  return t.state;
};
const seen = (s: PaymentState, key = 'a', amount = 10n) => must(onTransferDetected(s, { key, amountAtomic: amount }));
const verified = (s: PaymentState, key = 'a', outcome: 'confirmed' | 'dropped' = 'confirmed') =>
  must(onTransfersVerified(s, [{ key, outcome }], NOW));
const accepted = () => verified(seen(initialState('receive', 10n)));
const bank = (): PaymentState => ({
  ...initialState('send', 10n),
  payout: { quoteExpiresAt: '2026-11-27T01:00:00.000Z', offrampStatus: null, refundTxHash: null },
});
const kind = (s: PaymentState, v: PaymentRunView = view()) => nextStep(s, v).kind;

describe('nextStep: the PaymentWorkflow loop, step by step', () => {
  test('queued messages come first, whatever the state', () => {
    assert.equal(kind(initialState('receive', 10n), view({ queued: 1 })), 'take-messages');
    assert.equal(kind(must(onExpired(initialState('receive', 10n))), view({ queued: 2, runIsLong: true })), 'take-messages');
  });

  test('an open Payment with nothing seen waits until expiresAt, for exactly the time left', () => {
    assert.deepEqual(nextStep(initialState('receive', 10n), view({ expiresAtMs: NOW_MS + 90_000 })), { kind: 'await-expiry', ms: 90_000 });
  });

  test('at expiresAt it first has the chain read through that moment, then expires', () => {
    const due = view({ expiresAtMs: NOW_MS });
    assert.equal(kind(initialState('receive', 10n), due), 'read-chain-through-expiry');
    assert.equal(kind(initialState('receive', 10n), { ...due, chainReadThroughExpiry: true }), 'expire');
  });

  test('a transfer still confirming is verified, also past expiresAt (the payer paid in time)', () => {
    const processing = seen(initialState('receive', 10n));
    assert.equal(kind(processing), 'verify-transfers');
    assert.equal(kind(processing, view({ expiresAtMs: NOW_MS - 1, chainReadThroughExpiry: true })), 'verify-transfers');
  });

  test('accepted: it settles; a settlement hold waits for an operator', () => {
    assert.equal(kind(accepted()), 'settle');
    assert.equal(kind(must(onSettlementTrouble(accepted(), 'settlement_unconfirmed'))), 'await-operator');
  });

  test('a data error holds it for an operator even while open, with transfers confirming or expiry due', () => {
    const held = must(onDataError(seen(initialState('receive', 10n))));
    assert.equal(kind(held, view({ expiresAtMs: NOW_MS - 1 })), 'await-operator');
  });

  test('final: done, unless a transfer it saw is still confirming (followed to its end first)', () => {
    const succeeded = must(onSettlementConfirmed(accepted(), '0xsettled', NOW));
    assert.equal(kind(succeeded), 'done');
    const duplicate = seen(succeeded, 'b');
    assert.equal(kind(duplicate), 'verify-transfers');
    assert.equal(kind(verified(duplicate, 'b')), 'done');
  });

  test('a long run continues as new, but never with messages queued and never once done', () => {
    const processing = seen(initialState('receive', 10n));
    assert.equal(kind(processing, view({ runIsLong: true })), 'continue-as-new');
    assert.equal(kind(processing, view({ runIsLong: true, queued: 1 })), 'take-messages');
    assert.equal(kind(must(onExpired(initialState('receive', 10n))), view({ runIsLong: true })), 'done');
  });

  test('a bank Payment at the provider asks for the payout once, then follows it; an uncertain provider is still read while held', () => {
    const atProvider = onProviderFunded(verified(seen(bank())), '0xsettled').state;
    assert.equal(kind(atProvider), 'request-payout');
    const submitted = { ...atProvider, payout: { ...atProvider.payout!, offrampStatus: 'submitted' as const } };
    assert.equal(kind(submitted), 'follow-payout');
    assert.equal(kind(must(onPayoutHeld(atProvider, 'provider_state_uncertain'))), 'follow-payout');
    assert.equal(kind(must(onPayoutHeld(atProvider, 'provider_failure'))), 'await-operator');
  });

  test('a cancelled Payment is done', () => {
    const d = decideCancel(initialState('receive', 10n), 'other', null, NOW);
    assert.ok(d.outcome === 'cancelled');
    assert.equal(kind(d.transition.state), 'done');
  });
});

const STATUSES: PaymentStatus[] = ['requires_payment_method', 'processing', 'accepted', 'succeeded', 'failed', 'cancelled', 'expired'];

/** Any state nextStep may be asked about, including ones the machine never produces (it must not care). */
const anyState: fc.Arbitrary<PaymentState> = fc
  .record({
    intent: fc.constantFrom('receive' as const, 'send' as const),
    status: fc.constantFrom(...STATUSES),
    stage: fc.constantFrom(
      'awaiting_funds' as const,
      'awaiting_confirmations' as const,
      'settlement_pending' as const,
      'settlement_broadcast' as const,
      'settlement_confirmed' as const,
      null,
    ),
    operationalState: fc.constantFrom('normal' as const, 'retrying' as const, 'requires_intervention' as const),
    operationalReasonCode: fc.option(
      fc.constantFrom('data_error', 'settlement_failed', 'settlement_unconfirmed', 'provider_state_uncertain', 'provider_failure'),
    ),
    transfers: fc.array(
      fc.record({
        key: fc.string({ minLength: 1, maxLength: 3 }),
        amountAtomic: fc.bigInt({ min: 1n, max: 20n }),
        status: fc.constantFrom('pending' as const, 'confirmed' as const, 'dropped' as const),
        role: fc.constantFrom('funding' as const, 'duplicate' as const, 'late' as const, 'excess' as const, 'refund' as const),
      }),
      { maxLength: 3 },
    ),
    payout: fc.option(
      fc.record({
        quoteExpiresAt: fc.constant(NOW),
        offrampStatus: fc.option(
          fc.constantFrom('submitted' as const, 'processing' as const, 'completed' as const, 'failed' as const, 'returned' as const),
        ),
        refundTxHash: fc.constant(null),
      }),
      { nil: undefined },
    ),
  })
  .map((r) => ({ ...initialState(r.intent, 10n), ...r }));

const anyView: fc.Arbitrary<PaymentRunView> = fc.record({
  queued: fc.nat({ max: 3 }),
  nowMs: fc.constant(NOW_MS),
  expiresAtMs: fc.integer({ min: NOW_MS - 60_000, max: NOW_MS + 60_000 }),
  chainReadThroughExpiry: fc.boolean(),
  runIsLong: fc.boolean(),
});

const held = (s: PaymentState) => s.operationalState === 'requires_intervention';

/** What must hold of the answer for this state and view (the loop's rules, stated apart from their order). */
function checkStep(s: PaymentState, v: PaymentRunView, step: PaymentStep): void {
  const confirming = unresolvedTransfers(s).length > 0;
  if (v.queued > 0) return assert.equal(step.kind, 'take-messages', 'messages first');
  assert.notEqual(step.kind, 'take-messages', 'nothing queued: nothing to take');
  // The run ends exactly when the Payment is final and nothing it saw is still confirming.
  assert.equal(step.kind === 'done', isTerminal(s) && !confirming);
  if (step.kind === 'continue-as-new') assert.ok(v.runIsLong);
  if (v.runIsLong && step.kind !== 'done') assert.equal(step.kind, 'continue-as-new', 'a long run goes on in a new one');
  if (v.runIsLong) return;
  if (isDataHold(s) && step.kind !== 'done') assert.equal(step.kind, 'await-operator', 'nothing is automated under a data hold');
  if (step.kind === 'verify-transfers') assert.ok(confirming, 'only transfers still confirming are read');
  if (step.kind === 'await-expiry') assert.ok(isOpen(s) && !confirming && step.ms > 0 && step.ms === v.expiresAtMs - v.nowMs);
  if (step.kind === 'expire' || step.kind === 'read-chain-through-expiry') {
    assert.ok(isOpen(s) && !confirming && v.expiresAtMs <= v.nowMs, 'expiry only once due, with nothing confirming');
    assert.equal(step.kind === 'expire', v.chainReadThroughExpiry, 'never expired before the chain is read through expiresAt');
  }
  if (step.kind === 'settle')
    assert.ok(s.status === 'accepted' && !held(s) && !awaitsPayout(s), 'settles only an accepted Payment, not held, not at the provider');
  if (step.kind === 'request-payout')
    assert.ok(awaitsPayout(s) && s.payout!.offrampStatus === null && !held(s), 'the payout is asked for once, never while held');
  if (step.kind === 'follow-payout') assert.ok(awaitsPayout(s) && (!held(s) || s.operationalReasonCode === 'provider_state_uncertain'));
  if (step.kind === 'await-operator') assert.ok(held(s), 'only a hold waits for an operator');
  // Open and not held by a data error: it works towards acceptance or expiry, never settles or pays out.
  if (isOpen(s) && !isDataHold(s))
    assert.ok(['verify-transfers', 'await-expiry', 'read-chain-through-expiry', 'expire'].includes(step.kind), step.kind);
}

describe('nextStep properties', () => {
  test('for any state and view, the step is the one the loop rules allow', () => {
    fc.assert(
      fc.property(anyState, anyView, (s, v) => {
        const step = nextStep(s, v);
        checkStep(s, v, step);
        assert.deepEqual(nextStep(s, v), step, 'the same question, the same answer (workflow code must be deterministic)');
      }),
      { numRuns: 5000 },
    );
  });

  test('driven by its own steps, a receive Payment paid in random transfers (some dropped by a reorg) always ends, succeeded or expired', () => {
    const transfer = fc.record({
      amount: fc.bigInt({ min: 1n, max: 6n }),
      outcome: fc.constantFrom('confirmed' as const, 'dropped' as const),
    });
    fc.assert(
      fc.property(fc.array(transfer, { maxLength: 6 }), (transfers) => {
        // The chain: what each transfer turns out to be when it is read; they arrive one message at a time.
        const chain = new Map(transfers.map((t, i) => [`t${i}`, t]));
        const arriving = [...chain.keys()];
        let s = initialState('receive', 10n);
        let nowMs = NOW_MS;
        let chainRead = false;
        const expiresAtMs = NOW_MS + 60_000;
        for (let steps = 0; steps < 100; steps += 1) {
          const step = nextStep(s, {
            queued: arriving.length > 0 ? 1 : 0,
            nowMs,
            expiresAtMs,
            chainReadThroughExpiry: chainRead,
            runIsLong: false,
          });
          checkStep(
            s,
            { queued: arriving.length > 0 ? 1 : 0, nowMs, expiresAtMs, chainReadThroughExpiry: chainRead, runIsLong: false },
            step,
          );
          if (step.kind === 'done') {
            assert.ok(s.status === 'succeeded' || s.status === 'expired', s.status);
            if (s.status === 'succeeded') assert.equal(s.confirmedAtomic, 10n, 'succeeded only when paid in full');
            assert.equal(unresolvedTransfers(s).length, 0, 'every transfer seen was followed to its end');
            return;
          }
          if (step.kind === 'take-messages') {
            const key = arriving.shift()!;
            s = onTransferDetected(s, { key, amountAtomic: chain.get(key)!.amount })?.state ?? s;
          } else if (step.kind === 'verify-transfers') {
            s = must(
              onTransfersVerified(
                s,
                unresolvedTransfers(s).map((x) => ({ key: x.key, outcome: chain.get(x.key)!.outcome })),
                NOW,
              ),
            );
          } else if (step.kind === 'await-expiry') {
            nowMs += step.ms;
          } else if (step.kind === 'read-chain-through-expiry') {
            chainRead = true;
          } else if (step.kind === 'expire') {
            s = must(onExpired(s));
          } else if (step.kind === 'settle') {
            s = onSettlementConfirmed(s, '0xsettled', NOW).state;
          } else {
            assert.fail(`a step a receive Payment with nothing held never takes: ${step.kind}`);
          }
        }
        assert.fail(`no end in 100 steps: ${s.status}`);
      }),
      { numRuns: 500 },
    );
  });
});
