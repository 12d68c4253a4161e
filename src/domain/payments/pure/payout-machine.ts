import {
  begin,
  clearHold,
  holdForIntervention,
  isTerminal,
  moveTo,
  type OfframpStatus,
  type PaymentState,
  type Transition,
} from './payment-machine';

/**
 * The off-ramp leg of a bank Payment, pure like the payment machine it extends: escrow is funded as for
 * every send Payment, the settlement pays the provider's deposit address (principal + provider fee)
 * and the fee wallets, then the provider's payout moves offrampStatus until the bank account is paid.
 *
 *   settlement confirmed -> onProviderFunded (status stays accepted; the money is at the provider)
 *   payout submitted -> processing -> completed (succeeded, bank_funding.completed)
 *                                  -> failed (failed, provider_failure, bank_funding.failed; the
 *                                     provider sends the stablecoin back to escrow: a refund)
 *   completed -> returned (stays succeeded, payment.settlement_returned, a refund too)
 *   uncertain -> requires_intervention (provider_state_uncertain) until a read or an operator tells.
 */

/** A provider payout update, as the workflow receives it (signal or read). */
export interface PayoutUpdate {
  status: OfframpStatus;
  reasonCode: string | null;
  refundTxHash: string | null;
}

/** Where a status stands in the provider's order: an update never moves a payout back. */
const RANK: Record<OfframpStatus, number> = { submitted: 1, processing: 2, completed: 3, failed: 3, returned: 4 };

/** The settlement to the provider's deposit address confirmed: the payout is next (not yet succeeded). */
export function onProviderFunded(state: PaymentState, txHash: string): Transition {
  const t = begin(state);
  t.state.settlementTxHash = txHash;
  clearHold(t);
  t.state.stage = 'settlement_confirmed';
  t.ledger.push('settlement');
  return t;
}

/**
 * A payout status learned from the provider (its callback or a read). Stale and repeated updates
 * change nothing (null); a learned state releases a provider_state_uncertain hold.
 */
export function onPayoutUpdate(state: PaymentState, update: PayoutUpdate, nowIso: string): Transition | null {
  const payout = state.payout;
  if (!payout) return null;
  const current = payout.offrampStatus;
  if (current && RANK[update.status] <= RANK[current]) return null;
  // Only a completed payout can come back; a failed one is final.
  if (update.status === 'returned' && current !== 'completed') return null;
  if (current === 'failed') return null;
  const t = begin(state);
  const p = t.state.payout!;
  p.offrampStatus = update.status;
  if (state.operationalReasonCode === 'provider_state_uncertain') clearHold(t);
  if (update.status === 'completed') {
    if (isTerminal(state)) return null;
    moveTo(t, 'succeeded', 'settlement_confirmed');
    t.stamps.succeededAt = nowIso;
    t.events.push('payment.succeeded', 'bank_funding.completed');
    t.ledger.push('payout');
  } else if (update.status === 'failed') {
    p.refundTxHash = update.refundTxHash;
    t.payoutReasonCode = update.reasonCode;
    clearHold(t);
    moveTo(t, 'failed', null);
    t.events.push('payment.failed', 'bank_funding.failed');
    t.failure = { code: 'provider_failure', message: `The bank payout failed${update.reasonCode ? ` (${update.reasonCode})` : ''}` };
    markRefund(t, update.refundTxHash);
  } else if (update.status === 'returned') {
    p.refundTxHash = update.refundTxHash;
    t.payoutReasonCode = update.reasonCode;
    t.state.operationalReasonCode = 'settlement_returned';
    t.events.push('payment.settlement_returned');
    t.ledger.push('payout_returned');
    markRefund(t, update.refundTxHash);
  }
  return t;
}

/** A transfer seen before the provider named it as its refund, still confirming, is the refund. */
function markRefund(t: Transition, refundTxHash: string | null): void {
  if (!refundTxHash) return;
  for (const tracked of t.state.transfers) {
    if (tracked.status !== 'pending' || tracked.role === 'refund' || !tracked.key.toLowerCase().includes(`:${refundTxHash.toLowerCase()}:`))
      continue;
    tracked.role = 'refund';
    t.transferStatuses.push({ key: tracked.key, status: tracked.status, role: 'refund' });
  }
}

/**
 * The payout call stopped for an operator; null when held already. provider_state_uncertain: the
 * provider can't tell whether it holds the payout (never resubmitted blind; reads go on).
 * provider_failure: it refused the payout for good (or its quote lapsed meanwhile) after it received
 * the money; an operator settles it with the provider (retry asks again, fail ends the Payment).
 */
export function onPayoutHeld(state: PaymentState, reason: 'provider_state_uncertain' | 'provider_failure'): Transition | null {
  if (state.operationalState === 'requires_intervention') return null;
  const t = begin(state);
  holdForIntervention(t, reason);
  return t;
}
