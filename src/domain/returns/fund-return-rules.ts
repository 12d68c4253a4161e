/**
 * The rules of returning funds (refunds and incident recoveries), pure and unit-tested. The callers
 * read the facts under a row lock (the Payment's, the incident's), so a decision holds until commit.
 */
import { decisionOf, policyRules } from '../vaults/pure/vault-policy-rules';
import { decideRefundAmount, holdsAmount, isRefundable, type RefundAmountFacts, type RefundAmountRefusal } from './pure/return-amounts';

export const RETURN_KINDS = ['refund', 'incident_recovery'] as const;
export type ReturnKind = (typeof RETURN_KINDS)[number];

/**
 * pending: recorded, not yet sent; broadcast: signed, recorded and sent; confirmed: at the network's
 * confirmation depth; failed: nothing was sent, or what was sent can never be mined (the amount is free
 * again); requires_intervention: a send that may still be mined, or reverted/never confirmed, held for
 * an operator (never resent automatically).
 */
export const RETURN_STATUSES = ['pending', 'broadcast', 'confirmed', 'failed', 'requires_intervention'] as const;
export type ReturnStatus = (typeof RETURN_STATUSES)[number];

export type RefundRefusal =
  | 'payment_not_refundable'
  | RefundAmountRefusal
  | 'vault_missing'
  | 'vault_policy_inactive'
  | 'vault_token_not_allowed'
  | 'vault_spend_limit_exceeded'
  | 'vault_insufficient_balance';

export interface RefundFacts extends RefundAmountFacts {
  paymentIntent: string;
  paymentStatus: string;
  hasVault: boolean;
  /** The vault's policy, as vault funding obeys it (src/domain/vaults/pure/vault-policy-rules.ts policyRules). */
  policyActive: boolean;
  tokenAllowed: boolean;
  limitAtomic: bigint;
  /** What the vault's current period has spent so far: funding and refunds that did not fail. */
  spentInPeriodAtomic: bigint;
  /** The recipient vault's balance less what its funding and refunds in flight reserve. */
  vaultAvailableAtomic: bigint;
}

/**
 * A refund of a succeeded receive Payment, never beyond its amount nor beyond what its payer paid
 * (a Payment paid from several addresses refunds each its own share), paid from what the vault holds,
 * within the vault's policy: money leaving a vault obeys its policy whatever the reason.
 */
export function decideRefund(f: RefundFacts): { ok: true; amountAtomic: bigint } | { ok: false; reason: RefundRefusal } {
  if (!isRefundable(f.paymentIntent, f.paymentStatus)) return { ok: false, reason: 'payment_not_refundable' };
  const decided = decideRefundAmount(f);
  if (!decided.ok) return decided;
  const amount = decided.amountAtomic;
  if (!f.hasVault) return { ok: false, reason: 'vault_missing' };
  const policy = decisionOf(policyRules({ ...f, availableAtomic: f.vaultAvailableAtomic, amountAtomic: amount }));
  return policy.ok ? { ok: true, amountAtomic: amount } : { ok: false, reason: policy.reason as RefundRefusal };
}

export type RecoveryRefusal = 'incident_already_recovered' | 'recovery_in_progress';

/** An incident's funds are returned once: a new request only after the last one failed. */
export function decideRecovery(f: {
  incidentStatus: string;
  liveRecovery: { status: string } | null;
}): { ok: true } | { ok: false; reason: RecoveryRefusal } {
  if (f.incidentStatus === 'confirmed' || f.liveRecovery?.status === 'confirmed')
    return { ok: false, reason: 'incident_already_recovered' };
  if (f.liveRecovery) return { ok: false, reason: 'recovery_in_progress' };
  return { ok: true };
}

/** The incident's status follows its latest recovery (incidentRecoverySummary counts these). */
export function incidentStatusFor(status: ReturnStatus): 'pending' | 'confirmed' | 'failed' | 'requires_intervention' {
  if (status === 'confirmed' || status === 'failed' || status === 'requires_intervention') return status;
  return 'pending';
}

export interface RefundSummary {
  status: 'none' | 'pending' | 'partially_refunded' | 'refunded';
  count: number;
  requestedAmountAtomic: string;
  confirmedAmountAtomic: string;
}

/**
 * The Payment's refundSummary: refunded once the confirmed total is the Payment's amount; pending while
 * any refund is on its way (or held for an operator); partially_refunded when some is confirmed and
 * nothing moves; none otherwise. Failed refunds count for nothing.
 */
export function refundSummaryOf(paymentAmountAtomic: bigint, refunds: Array<{ status: string; amountAtomic: bigint }>): RefundSummary {
  const held = refunds.filter((r) => holdsAmount(r.status));
  const requested = held.reduce((acc, r) => acc + r.amountAtomic, 0n);
  const confirmed = held.filter((r) => r.status === 'confirmed').reduce((acc, r) => acc + r.amountAtomic, 0n);
  const moving = held.some((r) => r.status !== 'confirmed');
  const status =
    confirmed > 0n && confirmed >= paymentAmountAtomic ? 'refunded' : moving ? 'pending' : confirmed > 0n ? 'partially_refunded' : 'none';
  return { status, count: held.length, requestedAmountAtomic: requested.toString(), confirmedAmountAtomic: confirmed.toString() };
}

/** The event a confirmed refund emits, from the Payment's confirmed refund total after it. */
export function refundConfirmedEvent(
  paymentAmountAtomic: bigint,
  confirmedTotalAtomic: bigint,
): 'payment.refunded' | 'payment.partially_refunded' {
  return confirmedTotalAtomic >= paymentAmountAtomic ? 'payment.refunded' : 'payment.partially_refunded';
}

/** What a confirmation check found for a sent return. */
export type SendCheck = 'confirmed' | 'pending' | 'reverted';

/** The status a sent return moves to after a check; null: unchanged (keep polling). */
export function afterCheck(check: SendCheck): ReturnStatus | null {
  if (check === 'confirmed') return 'confirmed';
  // A reverted transfer spent its nonce and moved nothing; an operator decides what comes next.
  if (check === 'reverted') return 'requires_intervention';
  return null;
}
