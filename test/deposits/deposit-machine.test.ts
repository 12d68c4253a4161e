import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  detect,
  isDataHold,
  isTerminal,
  onConfirming,
  onDataError,
  onOperatorResolution,
  onSettlementAttemptFailed,
  onSettlementBroadcast,
  onSettlementConfirmed,
  onSettlementTrouble,
  onSourceChecked,
  onSourceInvalidated,
  type DepositState,
  type DetectionInput,
} from '../../src/domain/deposits/pure/deposit-machine';
import { fromPersistedState, toPersistedState } from '../../src/domain/deposits/pure/deposit-serde';
import { receiptPosting, receiptReversalPosting, reversalPosting, settlementPosting } from '../../src/domain/deposits/deposit-postings';
import { preparePosting } from '../../src/domain/ledger/ledger';

const USDC = 1_000_000n;
const NOW = '2026-11-22T10:00:00.000Z';
const detection = (over: Partial<DetectionInput> = {}): DetectionInput => ({
  amountAtomic: 100n * USDC,
  minimum: { amountAtomic: USDC, inclusive: true },
  platformFeeBps: 100,
  partnerFeeBps: 50,
  assetAccepted: true,
  ...over,
});

function settling(): DepositState {
  const confirming = onConfirming(detect(detection()).state)!.state;
  return onSourceChecked(confirming, 'confirmed')!.state;
}

function held(): DepositState {
  let s = settling();
  for (let i = 0; i < 3; i += 1) s = onSettlementAttemptFailed(s, { maxAttempts: 3 })!.state;
  return s;
}

describe('Deposit state machine', () => {
  test('detects a deposit at or above the minimum with fees deducted from the source amount', () => {
    const t = detect(detection());
    assert.equal(t.state.status, 'detected');
    assert.equal(t.state.statusVersion, 1);
    assert.deepEqual(t.events, ['deposit.detected']);
    assert.deepEqual(t.ledger, []);
    assert.deepEqual(t.state.fees, {
      platformAtomic: 1_000_000n,
      partnerAtomic: 500_000n,
      networkAtomic: 0n,
      setupAtomic: 0n,
      netAtomic: 98_500_000n,
    });
    assert.deepEqual(t.state.settlement, { status: 'pending', txHash: null, settledAt: null, reasonCode: null });
  });

  test('honours minimumDeposit.inclusive: the minimum itself counts only when inclusive', () => {
    const exclusive = { amountAtomic: USDC, inclusive: false };
    assert.equal(detect(detection({ amountAtomic: USDC })).state.status, 'detected');
    assert.equal(detect(detection({ amountAtomic: USDC, minimum: exclusive })).state.status, 'ignored');
    assert.equal(detect(detection({ amountAtomic: USDC + 1n, minimum: exclusive })).state.status, 'detected');
  });

  test('ignores an amount under the minimum: recorded, nothing owed, no event, terminal', () => {
    const t = detect(detection({ amountAtomic: USDC - 1n }));
    assert.equal(t.state.status, 'ignored');
    assert.deepEqual(t.events, []);
    assert.deepEqual(t.state.settlement, { status: 'not_required', txHash: null, settledAt: null, reasonCode: 'below_minimum' });
    assert.equal(t.state.fees.netAtomic, 0n);
    assert.equal(isTerminal(t.state), true);
    assert.equal(onConfirming(t.state), null);
    assert.equal(onSourceChecked(t.state, 'confirmed'), null);
  });

  test('ignores a token the deposit address was not created for', () => {
    const t = detect(detection({ assetAccepted: false }));
    assert.equal(t.state.status, 'ignored');
    assert.equal(t.state.settlement.reasonCode, 'asset_not_accepted');
  });

  test('rounds fees down and gives the remainder to the net amount', () => {
    assert.deepEqual(detect(detection({ amountAtomic: 999n, minimum: { amountAtomic: 1n, inclusive: true } })).state.fees, {
      platformAtomic: 9n,
      partnerAtomic: 4n,
      networkAtomic: 0n,
      setupAtomic: 0n,
      netAtomic: 986n,
    });
  });

  test('moves detected to confirming, then settling with the receipt posted once the depth is reached', () => {
    const confirming = onConfirming(detect(detection()).state)!;
    assert.equal(confirming.state.status, 'confirming');
    assert.equal(confirming.state.statusVersion, 2);
    assert.deepEqual(confirming.events, []);
    assert.equal(onSourceChecked(confirming.state, 'pending'), null);
    const confirmed = onSourceChecked(confirming.state, 'confirmed')!;
    assert.equal(confirmed.state.status, 'settling');
    assert.equal(confirmed.state.statusVersion, 3);
    assert.deepEqual(confirmed.ledger, ['receipt']);
    assert.deepEqual(confirmed.events, []);
  });

  test('fails a deposit whose transfer dropped out of the canonical chain before confirmation, posting nothing', () => {
    const confirming = onConfirming(detect(detection()).state)!.state;
    const t = onSourceChecked(confirming, 'dropped')!;
    assert.equal(t.state.status, 'failed');
    assert.deepEqual(t.events, ['deposit.failed']);
    assert.deepEqual(t.ledger, []);
    assert.deepEqual(t.state.settlement, { status: 'not_required', txHash: null, settledAt: null, reasonCode: 'source_transfer_dropped' });
  });

  test('settles: broadcast, then confirmed, with deposit.settled and the settlement posting', () => {
    const broadcast = onSettlementBroadcast(settling(), '0xabc')!;
    assert.equal(broadcast.state.status, 'settling');
    assert.equal(broadcast.statusChanged, false);
    assert.deepEqual(broadcast.state.settlement, { status: 'broadcast', txHash: '0xabc', settledAt: null, reasonCode: null });
    const settled = onSettlementConfirmed(broadcast.state, '0xabc', NOW)!;
    assert.equal(settled.state.status, 'settled');
    assert.equal(settled.state.statusVersion, 4);
    assert.deepEqual(settled.events, ['deposit.settled']);
    assert.deepEqual(settled.ledger, ['settlement']);
    assert.deepEqual(settled.state.settlement, { status: 'confirmed', txHash: '0xabc', settledAt: NOW, reasonCode: null });
    assert.equal(settled.state.actualReceivedAtomic, 98_500_000n);
    assert.equal(isTerminal(settled.state), true);
  });

  test('retries failed settlement attempts and holds for intervention when the budget is spent', () => {
    let s = settling();
    const first = onSettlementAttemptFailed(s, { maxAttempts: 3 })!;
    assert.equal(first.state.status, 'settling');
    assert.equal(first.state.settlementAttempts, 1);
    assert.equal(first.state.settlement.reasonCode, 'settlement_failed');
    assert.deepEqual(first.events, []);
    s = onSettlementAttemptFailed(first.state, { maxAttempts: 3 })!.state;
    const last = onSettlementAttemptFailed(s, { maxAttempts: 3 })!;
    assert.equal(last.state.status, 'requires_intervention');
    assert.equal(last.state.statusVersion, settling().statusVersion + 1);
    assert.deepEqual(last.events, ['deposit.requires_intervention']);
    assert.deepEqual(last.state.settlement.status, 'requires_intervention');
    assert.equal(last.state.settlement.reasonCode, 'settlement_requires_intervention');
  });

  test('holds a reverted or unconfirmed settlement at once', () => {
    const t = onSettlementTrouble(onSettlementBroadcast(settling(), '0xabc')!.state, 'settlement_unconfirmed')!;
    assert.equal(t.state.status, 'requires_intervention');
    assert.equal(t.state.settlement.reasonCode, 'settlement_unconfirmed');
    assert.deepEqual(t.events, ['deposit.requires_intervention']);
  });

  test('an operator retry settles again with a fresh budget', () => {
    const r = onOperatorResolution(held(), { action: 'retry' })!;
    assert.equal(r.next, 'settle');
    assert.equal(r.transition.state.status, 'settling');
    assert.equal(r.transition.state.settlementAttempts, 0);
    assert.deepEqual(r.transition.state.settlement, { status: 'pending', txHash: null, settledAt: null, reasonCode: null });
    assert.deepEqual(r.transition.events, []);
  });

  test('an operator mark-settled (the net amount paid by hand) settles the rest, the fees, with a fresh budget', () => {
    const r = onOperatorResolution(held(), { action: 'mark-settled', txHash: '0xdef' })!;
    assert.equal(r.next, 'settle');
    assert.equal(r.transition.state.status, 'settling');
    assert.equal(r.transition.state.settlementAttempts, 0);
    assert.deepEqual(r.transition.state.settlement, { status: 'pending', txHash: null, settledAt: null, reasonCode: null });
    assert.deepEqual(r.transition.events, []);
    assert.deepEqual(r.transition.ledger, []);
  });

  test('only a settling deposit settles (a held one is released first)', () => {
    assert.equal(onSettlementConfirmed(held(), '0xabc', NOW), null);
  });

  test('an operator fail fails the deposit and reverses its receipt', () => {
    const r = onOperatorResolution(held(), { action: 'fail', reason: 'returned to sender' })!;
    assert.equal(r.transition.state.status, 'failed');
    assert.equal(r.transition.state.failureReason, 'returned to sender');
    assert.deepEqual(r.transition.state.settlement.status, 'cancelled');
    assert.equal(r.transition.state.settlement.reasonCode, 'operator_failed');
    assert.deepEqual(r.transition.events, ['deposit.failed']);
    assert.deepEqual(r.transition.ledger, ['receipt_reversal']);
  });

  test('ignores a resolution when nothing is held', () => {
    assert.equal(onOperatorResolution(settling(), { action: 'retry' }), null);
  });

  test('reverses only a settled deposit whose source was invalidated', () => {
    const settled = onSettlementConfirmed(settling(), '0xabc', NOW)!.state;
    const t = onSourceInvalidated(settled, NOW)!;
    assert.equal(t.state.status, 'reversed');
    assert.deepEqual(t.events, ['deposit.reversed']);
    assert.deepEqual(t.ledger, ['reversal']);
    assert.deepEqual(t.state.settlement, {
      status: 'reversed',
      txHash: '0xabc',
      settledAt: NOW,
      reasonCode: 'source_transfer_invalidated',
    });
    assert.equal(t.state.reversedAt, NOW);
    assert.equal(onSourceInvalidated(settling(), NOW), null);
    assert.equal(onSourceInvalidated(t.state, NOW), null);
  });

  test('round-trips the state through its JSON-safe form', () => {
    const s = onSettlementConfirmed(settling(), '0xabc', NOW)!.state;
    assert.deepEqual(fromPersistedState(JSON.parse(JSON.stringify(toPersistedState(s)))), s);
  });

  test('builds balanced postings whose reversal negates receipt plus settlement per book', () => {
    const d = {
      id: 'deposit_x',
      appId: 'app_x',
      accountId: 'acct_x',
      depositAddressId: 'deposit_addr_x',
      chainId: 31337,
      tokenAddress: '0xf1108D9fDF3d265B59Bf6Ce7Bf240f99c071ffF5',
      assetSymbol: 'USDC',
      decimals: 6,
      amountAtomic: 100_000_000n,
      platformFeeAtomic: 1_000_000n,
      partnerFeeAtomic: 500_000n,
      netAtomic: 98_500_000n,
    } as unknown as Parameters<typeof receiptPosting>[0];
    const sums = new Map<string, bigint>();
    for (const p of [receiptPosting(d), settlementPosting(d), reversalPosting(d)]) {
      for (const e of preparePosting(p).entries) sums.set(e.book, (sums.get(e.book) ?? 0n) + e.amountAtomic);
    }
    assert.deepEqual(
      [...sums.values()].filter((v) => v !== 0n),
      [],
    );
    // An operator's fail keeps the funds, still at the address, in custody: held for recovery.
    const receiptAndHeld = new Map<string, bigint>();
    for (const p of [receiptPosting(d), receiptReversalPosting(d)]) {
      for (const e of preparePosting(p).entries) receiptAndHeld.set(e.book, (receiptAndHeld.get(e.book) ?? 0n) + e.amountAtomic);
    }
    assert.deepEqual(Object.fromEntries(receiptAndHeld), {
      'custody:deposit:deposit_addr_x': 100_000_000n,
      'external:31337': -100_000_000n,
    });
    assert.deepEqual(
      receiptReversalPosting(d).transactions?.map((t) => [t.financialLegKind, t.status, t.amountAtomic]),
      [['recovery_hold', 'pending', 100_000_000n]],
    );
  });
});

describe('Deposit held by a data error (a write the database refused)', () => {
  const confirming = () => onConfirming(detect(detection()).state)!.state;

  test('holds in requires_intervention with reason data_error and deposit.requires_intervention; a final deposit is not held', () => {
    const t = onDataError(confirming())!;
    assert.equal(t.state.status, 'requires_intervention');
    assert.equal(t.state.settlement.reasonCode, 'data_error');
    assert.deepEqual(t.events, ['deposit.requires_intervention']);
    assert.ok(isDataHold(t.state));
    assert.equal(onDataError(t.state), null);
    assert.equal(onDataError(detect(detection({ amountAtomic: 1n })).state), null);
  });

  test('retry resumes where the refused step stood; without that, neither retry nor fail is taken', () => {
    const heldWhileConfirming = onDataError(confirming())!.state;
    const resumed = onOperatorResolution(heldWhileConfirming, { action: 'retry' }, { dataHoldFrom: 'confirming' })!;
    assert.equal(resumed.transition.state.status, 'confirming');
    assert.equal(resumed.transition.state.settlement.reasonCode, null);
    assert.deepEqual(resumed.transition.ledger, []);
    assert.equal(onOperatorResolution(heldWhileConfirming, { action: 'retry' }), null);
    assert.equal(onOperatorResolution(heldWhileConfirming, { action: 'fail', reason: 'x' }), null);
  });

  test('fail reverses the receipt only when the deposit was settling (before that none was posted)', () => {
    const beforeReceipt = onOperatorResolution(
      onDataError(confirming())!.state,
      { action: 'fail', reason: 'bad data' },
      { dataHoldFrom: 'confirming' },
    )!;
    assert.equal(beforeReceipt.transition.state.status, 'failed');
    assert.deepEqual(beforeReceipt.transition.ledger, []);
    assert.deepEqual(beforeReceipt.transition.events, ['deposit.failed']);
    const afterReceipt = onOperatorResolution(
      onDataError(settling())!.state,
      { action: 'fail', reason: 'bad data' },
      { dataHoldFrom: 'settling' },
    )!;
    assert.deepEqual(afterReceipt.transition.ledger, ['receipt_reversal']);
  });
});
