import type { OperatorAction } from '../../operators/pure/operator-resolution';
import type { HoldReason, SettlementHoldReason } from '../../settlement/pure/hold-reasons';
/**
 * The Payment lifecycle as a pure state machine: (state, event) -> (state, transition). No I/O, no
 * clocks (times come in with the event), so every rule is unit-tested without Temporal. The
 * PaymentWorkflow feeds it events and carries out the transitions it returns.
 */

export type PaymentStatus = 'requires_payment_method' | 'processing' | 'accepted' | 'succeeded' | 'failed' | 'cancelled' | 'expired';

export type OperationalState = 'normal' | 'retrying' | 'requires_intervention';

export type PaymentStage =
  'awaiting_funds' | 'awaiting_confirmations' | 'settlement_pending' | 'settlement_broadcast' | 'settlement_confirmed' | null;

export type PaymentEventName =
  | 'payment.processing'
  | 'payment.requires_action'
  | 'payment.accepted'
  | 'payment.succeeded'
  | 'payment.failed'
  | 'payment.cancelled'
  | 'payment.expired'
  | 'payment.requires_intervention'
  | 'payment.duplicate_received'
  | 'payment.late_received'
  | 'payment.settlement_returned'
  | 'bank_funding.completed'
  | 'bank_funding.failed';

/**
 * What a transfer is to the Payment. Its intent is fixed when it is seen (funding while the Payment is
 * open, duplicate once accepted or settled, late after expiry, cancellation or failure); a funding
 * transfer that confirms when nothing is owed any more becomes excess. A refund is the off-ramp
 * provider sending a failed or returned payout back to escrow (see payout-machine.ts).
 */
export type TransferRole = 'funding' | 'duplicate' | 'late' | 'excess' | 'refund';

export interface TrackedTransfer {
  key: string; // see src/chain/transfer-key.ts
  amountAtomic: bigint;
  status: 'pending' | 'confirmed' | 'dropped';
  role: TransferRole;
}

export interface PaymentState {
  intent: 'receive' | 'send';
  status: PaymentStatus;
  stage: PaymentStage;
  operationalState: OperationalState;
  operationalReasonCode: string | null;
  statusVersion: number;
  requiredAtomic: bigint;
  confirmedAtomic: bigint;
  transfers: TrackedTransfer[];
  settlementAttempts: number;
  settlementTxHash: string | null;
  /** Bank Payments only (absent for upa): the off-ramp leg, see payout-machine.ts. */
  payout?: PayoutState;
}

/** The provider's payout status, as the Payment shows it (offrampStatus); null until the payout is asked for. */
export type OfframpStatus = 'submitted' | 'processing' | 'completed' | 'failed' | 'returned';

export interface PayoutState {
  /** The quote's expiry (ISO): escrow funded and confirmed after it can't be paid out on it. */
  quoteExpiresAt: string;
  offrampStatus: OfframpStatus | null;
  /** The provider's on-chain transfer back to escrow (failed or returned payout). */
  refundTxHash: string | null;
}

/** An incident: funds that reached escrow but do not count, held for recovery. */
export interface IncidentEffect {
  kind: 'late' | 'duplicate' | 'excess' | 'underpaid_expired' | 'quote_expired' | 'payout_refund';
  amountAtomic: bigint;
  transferKey: string | null;
}

/** What to persist, in one transaction, for one step. */
export interface Transition {
  fromStatusVersion: number;
  state: PaymentState;
  statusChanged: boolean;
  events: PaymentEventName[];
  /** Timestamps to set (ISO), e.g. acceptedAt when status becomes accepted. */
  stamps: Partial<Record<'acceptedAt' | 'succeededAt' | 'cancelledAt', string>>;
  incidents: IncidentEffect[];
  /** The transfers this step changed (seen, confirmed, dropped, or given another role). */
  transferStatuses: Array<{ key: string; status: TrackedTransfer['status']; role: TransferRole }>;
  /** payout: the provider paid the bank; payout_returned: the provider holds the money again. */
  ledger: Array<'collection' | 'settlement' | 'payout' | 'payout_returned'>;
  cancel?: { reasonCode: string; reason: string | null };
  failure?: { code: string; message: string };
  /** Bank Payments: the provider's reason for a failed or returned payout. */
  payoutReasonCode?: string | null;
}

export const TERMINAL: ReadonlySet<PaymentStatus> = new Set(['succeeded', 'failed', 'cancelled', 'expired']);
const OPEN: ReadonlySet<PaymentStatus> = new Set(['requires_payment_method', 'processing']);

export function isTerminal(s: PaymentState): boolean {
  return isFinalStatus(s.status);
}

/** Whether a Payment of this status is final (a stored row's status, too). */
export function isFinalStatus(status: string): boolean {
  return TERMINAL.has(status as PaymentStatus);
}

export function isOpen(s: PaymentState): boolean {
  return isOpenStatus(s.status);
}

/** Whether a Payment of this status still takes options and funds (a stored row's status, too). */
export function isOpenStatus(status: string): boolean {
  return OPEN.has(status as PaymentStatus);
}

export function initialState(intent: 'receive' | 'send', requiredAtomic: bigint): PaymentState {
  return {
    intent,
    status: 'requires_payment_method',
    stage: 'awaiting_funds',
    operationalState: 'normal',
    operationalReasonCode: null,
    statusVersion: 1,
    requiredAtomic,
    confirmedAtomic: 0n,
    transfers: [],
    settlementAttempts: 0,
    settlementTxHash: null,
  };
}

export function begin(state: PaymentState): Transition {
  return {
    fromStatusVersion: state.statusVersion,
    state: { ...state, transfers: state.transfers.map((t) => ({ ...t })), ...(state.payout ? { payout: { ...state.payout } } : {}) },
    statusChanged: false,
    events: [],
    stamps: {},
    incidents: [],
    transferStatuses: [],
    ledger: [],
  };
}

/** Every status change raises statusVersion by exactly one. */
export function moveTo(t: Transition, status: PaymentStatus, stage: PaymentStage): void {
  if (t.state.status === status) {
    t.state.stage = stage;
    return;
  }
  t.state.status = status;
  t.state.stage = stage;
  t.state.statusVersion += 1;
  t.statusChanged = true;
}

/** Funding transfers still confirming: while there are any the Payment neither expires nor asks for more. */
export function pendingTransfers(s: PaymentState): TrackedTransfer[] {
  return s.transfers.filter((t) => t.status === 'pending' && t.role === 'funding');
}

/** Every transfer not yet confirmed or dropped, whatever its role: each is followed to its resolution. */
export function unresolvedTransfers(s: PaymentState): TrackedTransfer[] {
  return s.transfers.filter((t) => t.status === 'pending');
}

/** Seen funding not yet confirmed: counted against what the payer still owes, so nobody pays twice. */
export function pendingFundingAtomic(s: PaymentState): bigint {
  return pendingTransfers(s).reduce((sum, t) => sum + t.amountAtomic, 0n);
}

export function remainingAtomic(s: PaymentState): bigint {
  const owed = s.requiredAtomic - s.confirmedAtomic;
  return owed > 0n ? owed : 0n;
}

/**
 * How a transfer counts once the Payment can no longer use it, held for recovery: late after expiry,
 * cancellation or failure (final: later funds don't revive it), duplicate once accepted or settled.
 * null while the Payment is open.
 */
export function unusableTransferKind(status: PaymentStatus): 'late' | 'duplicate' | null {
  if (TERMINAL.has(status) && status !== 'succeeded') return 'late';
  if (!OPEN.has(status)) return 'duplicate';
  return null;
}

/**
 * A transfer to the escrow address was seen on chain (maybe again: then nothing changes). It is
 * tracked until it is confirmed or dropped; only then does it count, or become an incident. One a
 * reorg dropped and the chain mined again (same transaction, same place in it) is followed again,
 * with the role the Payment's status gives it now.
 */
export function onTransferDetected(
  state: PaymentState,
  transfer: { key: string; amountAtomic: bigint; txHash?: string },
): Transition | null {
  const known = state.transfers.find((t) => t.key === transfer.key);
  if (known && known.status !== 'dropped') return null;
  const t = begin(state);
  const refund = !!state.payout?.refundTxHash && transfer.txHash?.toLowerCase() === state.payout.refundTxHash.toLowerCase();
  const role: TransferRole = refund ? 'refund' : (unusableTransferKind(state.status) ?? 'funding');
  if (known) {
    const tracked = t.state.transfers.find((x) => x.key === transfer.key)!;
    tracked.status = 'pending';
    tracked.role = role;
  } else {
    t.state.transfers.push({ ...transfer, status: 'pending', role });
  }
  t.transferStatuses.push({ key: transfer.key, status: 'pending', role });
  if (role !== 'funding') return t;
  if (state.status === 'requires_payment_method') t.events.push('payment.processing');
  moveTo(t, 'processing', 'awaiting_confirmations');
  return t;
}

/**
 * Confirmation results for tracked transfers. A confirmed funding transfer counts while the Payment
 * is open and owed (collect_exact: accepted once confirmed funds reach the amount, anything above
 * it is excess); one that confirms after that is excess; a confirmed duplicate or late transfer is
 * an incident. Every incident is held for recovery. Dropped transfers (no longer in the canonical
 * chain) count for nothing.
 */
export function onTransfersVerified(
  state: PaymentState,
  results: Array<{ key: string; outcome: 'confirmed' | 'dropped' | 'pending' }>,
  nowIso: string,
  /** The Payment's own clock, which its quote lapses on (ahead of nowIso once a sandbox app moved it). */
  clockIso: string = nowIso,
): Transition | null {
  const t = begin(state);
  let changed = false;
  for (const r of results) {
    const tracked = t.state.transfers.find((x) => x.key === r.key && x.status === 'pending');
    if (!tracked || r.outcome === 'pending') continue;
    changed = true;
    tracked.status = r.outcome;
    if (r.outcome === 'confirmed') countConfirmed(t, tracked);
    t.transferStatuses.push({ key: r.key, status: r.outcome, role: tracked.role });
  }
  if (!changed) return null;
  if (t.state.confirmedAtomic >= t.state.requiredAtomic && OPEN.has(t.state.status) && quoteLapsed(t.state, clockIso)) {
    // Funded on a lapsed quote: nothing leaves escrow (the quote can't be refreshed on this Payment).
    moveTo(t, 'failed', null);
    t.events.push('payment.failed');
    t.failure = { code: 'payment_quote_expired', message: 'The payout quote expired before the funds were confirmed' };
    t.incidents.push({ kind: 'quote_expired', amountAtomic: t.state.confirmedAtomic, transferKey: null });
  } else if (t.state.confirmedAtomic >= t.state.requiredAtomic && OPEN.has(t.state.status)) {
    moveTo(t, 'accepted', 'settlement_pending');
    t.stamps.acceptedAt = nowIso;
    t.events.push('payment.accepted');
    t.ledger.push('collection');
  } else if (pendingTransfers(t.state).length === 0 && t.state.confirmedAtomic === 0n && t.state.status === 'processing') {
    // Everything seen was reorged away: the Payment waits for funds again.
    moveTo(t, 'requires_payment_method', 'awaiting_funds');
    t.events.push('payment.requires_action');
  } else if (pendingTransfers(t.state).length === 0 && OPEN.has(t.state.status)) {
    t.state.stage = 'awaiting_funds';
  }
  return t;
}

/** A bank Payment's quote has lapsed at `nowIso` (never for upa Payments). */
export function quoteLapsed(s: PaymentState, nowIso: string): boolean {
  return !!s.payout && Date.parse(nowIso) >= Date.parse(s.payout.quoteExpiresAt);
}

function countConfirmed(t: Transition, tracked: TrackedTransfer): void {
  if (tracked.role === 'refund') {
    t.incidents.push({ kind: 'payout_refund', amountAtomic: tracked.amountAtomic, transferKey: tracked.key });
    return;
  }
  if (tracked.role === 'duplicate' || tracked.role === 'late') {
    t.incidents.push({ kind: tracked.role, amountAtomic: tracked.amountAtomic, transferKey: tracked.key });
    t.events.push(tracked.role === 'late' ? 'payment.late_received' : 'payment.duplicate_received');
    return;
  }
  const owed = OPEN.has(t.state.status) ? t.state.requiredAtomic - t.state.confirmedAtomic : 0n;
  if (owed <= 0n) {
    tracked.role = 'excess';
    t.incidents.push({ kind: 'excess', amountAtomic: tracked.amountAtomic, transferKey: tracked.key });
    return;
  }
  const counted = tracked.amountAtomic < owed ? tracked.amountAtomic : owed;
  t.state.confirmedAtomic += counted;
  // The transfer that crosses the amount pays it, and the rest of it is excess.
  if (tracked.amountAtomic > counted) {
    t.incidents.push({ kind: 'excess', amountAtomic: tracked.amountAtomic - counted, transferKey: tracked.key });
  }
}

/**
 * expiresAt passed. Only an open Payment expires, and not while funds it already saw are still
 * confirming (the payer paid in time); underpaid funds are held for recovery.
 */
export function onExpired(state: PaymentState): Transition | null {
  if (!OPEN.has(state.status) || pendingTransfers(state).length > 0) return null;
  const t = begin(state);
  moveTo(t, 'expired', null);
  t.events.push('payment.expired');
  if (state.confirmedAtomic > 0n) {
    t.incidents.push({ kind: 'underpaid_expired', amountAtomic: state.confirmedAtomic, transferKey: null });
  }
  return t;
}

export type CancelDecision =
  | { outcome: 'cancelled'; transition: Transition }
  | { outcome: 'already_cancelled' }
  | { outcome: 'refused'; reasonCode: 'send_payment' | 'funds_detected' | 'not_open'; message: string };

/** Cancel works only on a receive Payment before any funds were detected; a replay is a no-op. */
export function decideCancel(state: PaymentState, reasonCode: string, reason: string | null, nowIso: string): CancelDecision {
  if (state.status === 'cancelled') return { outcome: 'already_cancelled' };
  if (state.intent === 'send') {
    return { outcome: 'refused', reasonCode: 'send_payment', message: 'Send Payments cannot be cancelled' };
  }
  if (state.status !== 'requires_payment_method') {
    return { outcome: 'refused', reasonCode: 'not_open', message: `A ${state.status} Payment cannot be cancelled` };
  }
  if (state.transfers.length > 0) {
    return { outcome: 'refused', reasonCode: 'funds_detected', message: 'Funds were already detected for this Payment' };
  }
  const t = begin(state);
  moveTo(t, 'cancelled', null);
  // A write refused for its data held the Payment; the cancellation ends what that hold stopped.
  if (isDataHold(state)) clearHold(t);
  t.stamps.cancelledAt = nowIso;
  t.events.push('payment.cancelled');
  t.cancel = { reasonCode, reason };
  return { outcome: 'cancelled', transition: t };
}

/** Settlement retry policy: how many attempts before a human must look. */
export interface SettlementPolicy {
  maxAttempts: number;
}

export function onSettlementBroadcast(state: PaymentState, txHash: string): Transition {
  const t = begin(state);
  t.state.stage = 'settlement_broadcast';
  t.state.settlementTxHash = txHash;
  if (t.state.operationalState === 'retrying') {
    t.state.operationalState = 'normal';
    t.state.operationalReasonCode = null;
  }
  return t;
}

/** A settlement attempt failed before anything was broadcast: retry, or hold once the budget is spent. */
export function onSettlementAttemptFailed(state: PaymentState, policy: SettlementPolicy): Transition {
  const t = begin(state);
  t.state.settlementAttempts += 1;
  if (t.state.settlementAttempts >= policy.maxAttempts) {
    holdForIntervention(t, 'settlement_requires_intervention');
  } else {
    t.state.operationalState = 'retrying';
    t.state.operationalReasonCode = 'settlement_failed';
  }
  return t;
}

/** The outcome on chain is a revert, or is unknown: stop automation, keep the financial status. */
export function onSettlementTrouble(
  state: PaymentState,
  reason: Exclude<SettlementHoldReason, 'settlement_requires_intervention'>,
): Transition {
  const t = begin(state);
  holdForIntervention(t, reason);
  return t;
}

/**
 * The database refused a step's write for its data (a data_error): the step is not taken, and nothing
 * more is automated until an operator resolves the hold. null when already held (the operator looks).
 */
export function onDataError(state: PaymentState): Transition | null {
  if (state.operationalState === 'requires_intervention') return null;
  const t = begin(state);
  holdForIntervention(t, 'data_error');
  return t;
}

/** True while the Payment is held because a write was refused for its data. */
export function isDataHold(state: PaymentState): boolean {
  return state.operationalState === 'requires_intervention' && state.operationalReasonCode === 'data_error';
}

export function holdForIntervention(t: Transition, reasonCode: HoldReason): void {
  t.state.operationalState = 'requires_intervention';
  t.state.operationalReasonCode = reasonCode;
  t.events.push('payment.requires_intervention');
}

export function clearHold(t: Transition): void {
  t.state.operationalState = 'normal';
  t.state.operationalReasonCode = null;
}

export function onSettlementConfirmed(state: PaymentState, txHash: string, nowIso: string): Transition {
  const t = begin(state);
  t.state.settlementTxHash = txHash;
  t.state.operationalState = 'normal';
  t.state.operationalReasonCode = null;
  moveTo(t, 'succeeded', 'settlement_confirmed');
  t.stamps.succeededAt = nowIso;
  t.events.push('payment.succeeded');
  t.ledger.push('settlement');
  return t;
}

/** True while a bank Payment's money is at the provider and its payout is not final. */
export function awaitsPayout(s: PaymentState): boolean {
  return !!s.payout && s.status === 'accepted' && s.stage === 'settlement_confirmed';
}

/**
 * What the PaymentWorkflow does next. The workflow asks after every step it takes and carries out
 * the answer; each answer is one step of its loop:
 * - take-messages: handle the signals and updates queued, in order (always first);
 * - done: the Payment is final and nothing it saw is still confirming: the run ends;
 * - continue-as-new: the run's history is long; a new run carries the state on;
 * - await-operator: held (a refused write, a settlement or payout hold): only a message wakes it;
 * - verify-transfers: a transfer it saw is still confirming: wait for a block, then read them;
 * - await-expiry: open, nothing confirming: wait until expiresAt (a message wakes it earlier);
 * - read-chain-through-expiry: expiresAt passed, but the scanner has not read the chain that far yet;
 * - expire: expiresAt passed and the chain was read through it;
 * - request-payout / follow-payout: a bank Payment's money is at the provider: ask for the payout
 *   once, then follow it (a provider that can't tell keeps being read while held);
 * - settle: accepted and not held: one settlement attempt.
 */
export type PaymentStep =
  | { kind: 'take-messages' }
  | { kind: 'done' }
  | { kind: 'continue-as-new' }
  | { kind: 'await-operator' }
  | { kind: 'verify-transfers' }
  | { kind: 'await-expiry'; ms: number }
  | { kind: 'read-chain-through-expiry' }
  | { kind: 'expire' }
  | { kind: 'request-payout' }
  | { kind: 'follow-payout' }
  | { kind: 'settle' };

/** What the workflow knows besides the Payment's state when it asks for its next step. */
export interface PaymentRunView {
  /** Messages (transfers, payout updates, resolutions, cancels) queued and not handled yet. */
  queued: number;
  /** The workflow's clock, and expiresAt on it (ms since the epoch). */
  nowMs: number;
  expiresAtMs: number;
  /** The scanner has read the chain through the head of the moment expiresAt came. */
  chainReadThroughExpiry: boolean;
  /** The run's history is long enough that it should continue as new. */
  runIsLong: boolean;
}

export function nextStep(state: PaymentState, run: PaymentRunView): PaymentStep {
  if (run.queued > 0) return { kind: 'take-messages' };
  const confirming = unresolvedTransfers(state).length > 0;
  if (isTerminal(state) && !confirming) return { kind: 'done' };
  if (run.runIsLong) return { kind: 'continue-as-new' };
  // Nothing is automated while a refused write waits for an operator (a cancel still runs).
  if (isDataHold(state)) return { kind: 'await-operator' };
  if (isOpen(state)) {
    if (confirming) return { kind: 'verify-transfers' };
    const untilExpiry = run.expiresAtMs - run.nowMs;
    if (untilExpiry > 0) return { kind: 'await-expiry', ms: untilExpiry };
    // A payer who paid in time is never called late because the scanner was behind.
    return run.chainReadThroughExpiry ? { kind: 'expire' } : { kind: 'read-chain-through-expiry' };
  }
  const held = state.operationalState === 'requires_intervention';
  if (awaitsPayout(state) && (!held || state.operationalReasonCode === 'provider_state_uncertain')) {
    return state.payout!.offrampStatus === null && !held ? { kind: 'request-payout' } : { kind: 'follow-payout' };
  }
  // Final or held: transfers it saw are still followed to their resolution (excess, late...).
  if (confirming && (isTerminal(state) || held)) return { kind: 'verify-transfers' };
  // Held on purpose: only an operator's resolution (or a transfer to record) wakes it.
  if (held) return { kind: 'await-operator' };
  return { kind: 'settle' };
}

export type { OperatorAction } from '../../operators/pure/operator-resolution';

/**
 * Operator resolution of a requires_intervention hold. Returns null when there is no hold.
 * mark-settled: the operator paid the net amount by hand (the workflow checks it on chain and records
 * it as the net leg first), so the settlement resumes and the sender pays what is left (the fees).
 */
export function onOperatorResolution(
  state: PaymentState,
  resolution: OperatorAction,
): { transition: Transition; next: 'settle' | 'payout' | 'done' } | null {
  if (state.operationalState !== 'requires_intervention') return null;
  // The provider holds the money (its payout is in doubt or was refused): nothing is sent again;
  // retry reads (or asks) the provider again, fail ends the Payment, mark-settled doesn't apply.
  if (state.payout && state.stage === 'settlement_confirmed' && !isTerminal(state) && !isDataHold(state)) {
    if (resolution.action === 'mark-settled') return null;
    if (resolution.action === 'retry') {
      const t = begin(state);
      clearHold(t);
      return { transition: t, next: 'payout' };
    }
  }
  // A write refused for its data: retry resumes from the stored state (the refused step is offered again).
  if (resolution.action === 'retry' && isDataHold(state)) {
    const t = begin(state);
    clearHold(t);
    return { transition: t, next: isOpen(state) || isTerminal(state) ? 'done' : 'settle' };
  }
  // retry, or the operator paid the net amount by hand (checked on chain and recorded as the net leg):
  // the settlement resumes, so the sender pays what is left (the fees) and the books match the chain.
  if (resolution.action === 'retry' || resolution.action === 'mark-settled') {
    const t = begin(state);
    t.state.operationalState = 'normal';
    t.state.operationalReasonCode = null;
    t.state.settlementAttempts = 0;
    t.state.stage = 'settlement_pending';
    t.state.settlementTxHash = null;
    return { transition: t, next: 'settle' };
  }
  const t = begin(state);
  t.state.operationalState = 'normal';
  t.state.operationalReasonCode = null;
  moveTo(t, 'failed', null);
  t.events.push('payment.failed');
  t.failure = { code: 'operator_failed', message: resolution.reason };
  return { transition: t, next: 'done' };
}
