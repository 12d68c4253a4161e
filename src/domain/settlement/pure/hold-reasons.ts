/**
 * Why a resource stopped for an operator (requires_intervention), for every resource that settles
 * (Payments, deposits): the one set of hold reasons. Pure: the state machines and the workflows
 * import it.
 */
export type HoldReason =
  | SettlementHoldReason
  /** An activity's write was refused by the database for its data (activities/failures.ts): retrying can't help. */
  | 'data_error'
  /** Bank Payments: the off-ramp provider may hold a payout whose state it can't tell (never resubmitted). */
  | 'provider_state_uncertain'
  /** Bank Payments: the provider refused the payout after it was funded: the money is at the provider. */
  | 'provider_failure';

/** Why a settlement stopped for an operator. */
export type SettlementHoldReason =
  /** A leg reverted on chain. */
  | 'settlement_failed'
  /** Broadcast, but not confirmed within the checks: it may still land, so nothing is resent. */
  | 'settlement_unconfirmed'
  /** The retry budget is spent. */
  | 'settlement_requires_intervention'
  /** Refused before sending: nowhere to pay. */
  | 'settlement_destination_missing'
  /** Refused before sending: the destination is on another chain or asset. */
  | 'settlement_destination_mismatch'
  /** Refused before sending: the destination is one of the service's own addresses. */
  | 'settlement_destination_not_allowed'
  /** Refused before sending: reconciliation found money missing at the paying address. */
  | 'ledger_difference';

export type SettlementRefusalReason = Extract<
  SettlementHoldReason,
  'settlement_destination_missing' | 'settlement_destination_mismatch' | 'settlement_destination_not_allowed' | 'ledger_difference'
>;

const REFUSAL_REASONS: ReadonlySet<string> = new Set<SettlementRefusalReason>([
  'settlement_destination_missing',
  'settlement_destination_mismatch',
  'settlement_destination_not_allowed',
  'ledger_difference',
]);

/** A refusal's reason as sent by the activity; an unknown one still holds, as "missing". */
export function refusalReason(code: string): SettlementRefusalReason {
  return REFUSAL_REASONS.has(code) ? (code as SettlementRefusalReason) : 'settlement_destination_missing';
}
