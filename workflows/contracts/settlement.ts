/**
 * The contract between the settlement activities and the workflows that settle (Payments, deposits):
 * the failure type of a settlement that can't be attempted at all, so retrying can't help.
 * ApplicationFailure details[0] is the reason code.
 */
export const SETTLEMENT_REFUSED = 'settlement_refused';

/** The same refusal as histories recorded before the one settlement sender name it. */
export const LEGACY_DEPOSIT_SETTLEMENT_REFUSED = 'DepositSettlementRefused';

export function isSettlementRefusal(type: string | null | undefined): boolean {
  return type === SETTLEMENT_REFUSED || type === LEGACY_DEPOSIT_SETTLEMENT_REFUSED;
}

/**
 * The failure type of a send the network's fee cap stopped (the base fee plus the tip is above it):
 * nothing was signed, and it is tried again once the fee may have come down, never counted as a try.
 */
export const FEE_ABOVE_CAP = 'fee_above_cap';
