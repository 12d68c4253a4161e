import { splitFees, type FeeRates } from '../../amounts/pure/fees';
import { meetsMinimum, type MinimumDeposit } from '../../amounts/pure/minimum-deposit';
import type { OperatorAction } from '../../operators/pure/operator-resolution';
import type { HoldReason, SettlementHoldReason } from '../../settlement/pure/hold-reasons';
/**
 * The Deposit lifecycle as a pure state machine: (state, event) -> transition. No I/O and no clocks
 * (times come in with the event), so every rule is unit-tested without Temporal. The DepositWorkflow
 * feeds it events and carries out what it returns; the reconciliation pass uses it for reversals.
 *
 *   detected ──> confirming ──> settling ──> settled ──> reversed
 *      │             │             │  ^
 *      │             └─> failed    v  │ (operator: retry; mark-settled, the net paid by hand: the fees)
 *      │                 ^──── requires_intervention (operator: fail)
 *   ignored (under the minimum, decided at detection)
 */

export const DEPOSIT_STATUSES = [
  'detected',
  'confirming',
  'settling',
  'settled',
  'reversed',
  'failed',
  'ignored',
  'requires_intervention',
] as const;
export type DepositStatus = (typeof DEPOSIT_STATUSES)[number];

/** settlement.status: where paying the net amount out to the settlement destination stands. */
export type SettlementStatus =
  | 'pending' // not sent yet (still confirming, or settling and about to send / retrying)
  | 'broadcast' // sent, waiting for confirmations
  | 'confirmed' // paid out
  | 'requires_intervention'
  | 'not_required' // ignored or failed before anything was owed
  | 'cancelled' // an operator failed the deposit while it was held
  | 'reversed'; // the deposit's accounting record was invalidated after settlement

export type DepositEventName =
  'deposit.detected' | 'deposit.settled' | 'deposit.failed' | 'deposit.requires_intervention' | 'deposit.reversed';

/** Ledger legs a transition posts (see activities/deposits.ts for the entries of each). */
export type DepositLedgerLeg = 'receipt' | 'settlement' | 'receipt_reversal' | 'reversal';

export interface DepositFees {
  platformAtomic: bigint;
  partnerAtomic: bigint;
  /** Gas is paid by the service's treasury in the native coin, never deducted from the deposit. */
  networkAtomic: bigint;
  setupAtomic: bigint;
  netAtomic: bigint;
}

export interface DepositState {
  status: DepositStatus;
  statusVersion: number;
  amountAtomic: bigint;
  fees: DepositFees;
  settlement: { status: SettlementStatus; txHash: string | null; settledAt: string | null; reasonCode: string | null };
  settlementAttempts: number;
  actualReceivedAtomic: bigint | null;
  failureReason: string | null;
  reversedAt: string | null;
}

export interface Transition {
  fromStatusVersion: number;
  state: DepositState;
  statusChanged: boolean;
  events: DepositEventName[];
  ledger: DepositLedgerLeg[];
}

export const TERMINAL: ReadonlySet<DepositStatus> = new Set(['settled', 'reversed', 'failed', 'ignored']);

/** True when the DepositWorkflow has nothing left to do (a settled deposit can still be reversed later). */
export function isTerminal(s: DepositState): boolean {
  return TERMINAL.has(s.status);
}

/** Fees deducted from the source amount: the one fee split (no network or setup fee on a deposit). */
function depositFees(input: DetectionInput): DepositFees {
  const { platformAtomic, partnerAtomic, netAtomic } = splitFees(input.amountAtomic, input);
  return { platformAtomic, partnerAtomic, networkAtomic: 0n, setupAtomic: 0n, netAtomic };
}

const NO_FEES: DepositFees = { platformAtomic: 0n, partnerAtomic: 0n, networkAtomic: 0n, setupAtomic: 0n, netAtomic: 0n };

export interface DetectionInput extends FeeRates {
  amountAtomic: bigint;
  minimum: MinimumDeposit;
  /** false when the token is not the asset the deposit address was created for. */
  assetAccepted: boolean;
}

/**
 * A transfer to a deposit address was seen: the deposit's first state. Under the asset's minimum (or
 * in an asset the address does not take) it is `ignored`: recorded and visible, nothing settled, no
 * event. Otherwise `detected`, with deposit.detected.
 */
export function detect(input: DetectionInput): Transition {
  const ignoredReason = !input.assetAccepted
    ? 'asset_not_accepted'
    : !meetsMinimum(input.amountAtomic, input.minimum)
      ? 'below_minimum'
      : null;
  const state: DepositState = {
    status: ignoredReason ? 'ignored' : 'detected',
    statusVersion: 1,
    amountAtomic: input.amountAtomic,
    fees: ignoredReason ? NO_FEES : depositFees(input),
    settlement: { status: ignoredReason ? 'not_required' : 'pending', txHash: null, settledAt: null, reasonCode: ignoredReason },
    settlementAttempts: 0,
    actualReceivedAtomic: null,
    failureReason: null,
    reversedAt: null,
  };
  return { fromStatusVersion: 0, state, statusChanged: true, events: ignoredReason ? [] : ['deposit.detected'], ledger: [] };
}

function begin(state: DepositState): Transition {
  return {
    fromStatusVersion: state.statusVersion,
    state: { ...state, fees: { ...state.fees }, settlement: { ...state.settlement } },
    statusChanged: false,
    events: [],
    ledger: [],
  };
}

/** Every status change raises statusVersion by exactly one. */
function moveTo(t: Transition, status: DepositStatus): void {
  if (t.state.status === status) return;
  t.state.status = status;
  t.state.statusVersion += 1;
  t.statusChanged = true;
}

/** The workflow has taken the deposit over and waits for the confirmation depth. */
export function onConfirming(state: DepositState): Transition | null {
  if (state.status !== 'detected') return null;
  const t = begin(state);
  moveTo(t, 'confirming');
  return t;
}

export type SourceOutcome = 'confirmed' | 'pending' | 'dropped';

/**
 * The source transfer was re-read at the confirmation depth. Confirmed: the funds count, the receipt
 * is posted to the ledger and settlement starts. Dropped (no longer in the canonical chain): failed,
 * nothing posted. Pending: nothing changes.
 */
export function onSourceChecked(state: DepositState, outcome: SourceOutcome): Transition | null {
  if (state.status !== 'detected' && state.status !== 'confirming') return null;
  if (outcome === 'pending') return null;
  const t = begin(state);
  if (outcome === 'confirmed') {
    moveTo(t, 'settling');
    t.ledger.push('receipt');
    return t;
  }
  moveTo(t, 'failed');
  t.state.settlement = { status: 'not_required', txHash: null, settledAt: null, reasonCode: 'source_transfer_dropped' };
  t.events.push('deposit.failed');
  return t;
}

/** Settlement retry policy: how many attempts before a human must look. */
export interface SettlementPolicy {
  maxAttempts: number;
}

export function onSettlementBroadcast(state: DepositState, txHash: string): Transition | null {
  if (state.status !== 'settling') return null;
  const t = begin(state);
  t.state.settlement = { status: 'broadcast', txHash, settledAt: null, reasonCode: null };
  return t;
}

/** A settlement attempt failed before anything was broadcast: retry, or hold once the budget is spent. */
export function onSettlementAttemptFailed(state: DepositState, policy: SettlementPolicy): Transition | null {
  if (state.status !== 'settling') return null;
  const t = begin(state);
  t.state.settlementAttempts += 1;
  if (t.state.settlementAttempts >= policy.maxAttempts) {
    hold(t, 'settlement_requires_intervention');
  } else {
    t.state.settlement = { ...t.state.settlement, status: 'pending', reasonCode: 'settlement_failed' };
  }
  return t;
}

export type TroubleReason = Exclude<SettlementHoldReason, 'settlement_requires_intervention'>;

/** The payout reverted, never confirmed, or has nowhere to go: stop automation and hold. */
export function onSettlementTrouble(state: DepositState, reason: TroubleReason): Transition | null {
  if (state.status !== 'settling') return null;
  const t = begin(state);
  hold(t, reason);
  return t;
}

/**
 * The database refused a step's write for its data (a data_error): the step is not taken and the
 * deposit is held for an operator. null when already held or final.
 */
export function onDataError(state: DepositState): Transition | null {
  if (state.status === 'requires_intervention' || isTerminal(state)) return null;
  const t = begin(state);
  hold(t, 'data_error');
  return t;
}

/** True while the deposit is held because a write was refused for its data. */
export function isDataHold(state: DepositState): boolean {
  return state.status === 'requires_intervention' && state.settlement.reasonCode === 'data_error';
}

/** The statuses a data error can hold a deposit from (before that, nothing is stored to hold). */
export type DataHoldFrom = 'detected' | 'confirming' | 'settling';

function hold(t: Transition, reasonCode: HoldReason): void {
  moveTo(t, 'requires_intervention');
  t.state.settlement = { ...t.state.settlement, status: 'requires_intervention', reasonCode };
  t.events.push('deposit.requires_intervention');
}

export function onSettlementConfirmed(state: DepositState, txHash: string, nowIso: string): Transition | null {
  if (state.status !== 'settling') return null;
  const t = begin(state);
  moveTo(t, 'settled');
  t.state.settlement = { status: 'confirmed', txHash, settledAt: nowIso, reasonCode: null };
  t.state.actualReceivedAtomic = t.state.fees.netAtomic;
  t.events.push('deposit.settled');
  t.ledger.push('settlement');
  return t;
}

export type { OperatorAction } from '../../operators/pure/operator-resolution';

/**
 * Operator release of a requires_intervention hold. retry: settle again with a fresh budget (recorded
 * legs are re-sent byte for byte, so nothing is paid twice); mark-settled: the operator paid the net
 * amount out by hand (the workflow checks it on chain and records it as the net leg first), and
 * settling resumes for the rest (the fees); fail: the deposit is not settled and its receipt is
 * reversed in the ledger. Returns null when the deposit is not held (a stray or repeated resolution
 * changes nothing).
 */
export function onOperatorResolution(
  state: DepositState,
  resolution: OperatorAction,
  opts: { dataHoldFrom?: DataHoldFrom } = {},
): { transition: Transition; next: 'settle' | 'done' } | null {
  if (state.status !== 'requires_intervention') return null;
  if (isDataHold(state) && resolution.action !== 'mark-settled') {
    // Where the refused step stood is known to the run that held it; without it, neither resuming
    // nor reversing a receipt that may not be posted is safe (mark-settled still is).
    if (!opts.dataHoldFrom) return null;
    const t = begin(state);
    if (resolution.action === 'retry') {
      moveTo(t, opts.dataHoldFrom);
      t.state.settlement = { ...t.state.settlement, status: 'pending', reasonCode: null };
      return { transition: t, next: opts.dataHoldFrom === 'settling' ? 'settle' : 'done' };
    }
    moveTo(t, 'failed');
    t.state.settlement = {
      ...t.state.settlement,
      status: opts.dataHoldFrom === 'settling' ? 'cancelled' : 'not_required',
      reasonCode: 'operator_failed',
    };
    t.state.failureReason = resolution.reason;
    t.events.push('deposit.failed');
    // Only a deposit that was settling has its receipt posted.
    if (opts.dataHoldFrom === 'settling') t.ledger.push('receipt_reversal');
    return { transition: t, next: 'done' };
  }
  // retry, or the operator paid the net amount by hand (checked on chain and recorded as the net leg):
  // settling resumes, so the sender pays what is left (the fees) and the books match the chain.
  if (resolution.action === 'retry' || resolution.action === 'mark-settled') {
    const t = begin(state);
    moveTo(t, 'settling');
    t.state.settlementAttempts = 0;
    t.state.settlement = { status: 'pending', txHash: null, settledAt: null, reasonCode: null };
    return { transition: t, next: 'settle' };
  }
  const t = begin(state);
  moveTo(t, 'failed');
  t.state.settlement = { ...t.state.settlement, status: 'cancelled', reasonCode: 'operator_failed' };
  t.state.failureReason = resolution.reason;
  t.events.push('deposit.failed');
  t.ledger.push('receipt_reversal');
  return { transition: t, next: 'done' };
}

/**
 * Reconciliation found that a settled deposit's source transfer is no longer valid (e.g. a reorg deeper
 * than the confirmation depth): the accounting record is reversed. No on-chain clawback.
 */
export function onSourceInvalidated(state: DepositState, nowIso: string): Transition | null {
  if (state.status !== 'settled') return null;
  const t = begin(state);
  moveTo(t, 'reversed');
  t.state.settlement = { ...t.state.settlement, status: 'reversed', reasonCode: 'source_transfer_invalidated' };
  t.state.reversedAt = nowIso;
  t.events.push('deposit.reversed');
  t.ledger.push('reversal');
  return t;
}
