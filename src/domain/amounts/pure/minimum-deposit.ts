/**
 * An asset's minimum (spec: `minimumDeposit`, {amount, inclusive}), one rule for the amount a Payment
 * may ask and the transfer a deposit counts: inclusive, an amount equal to the minimum meets it;
 * otherwise it must be strictly greater. Amounts in atomic units.
 *
 * Pure: the DepositWorkflow decides with it through its machine, so its answers are part of recorded
 * workflow histories and must never change for any input.
 */
export interface MinimumDeposit {
  amountAtomic: bigint;
  /** true: an amount equal to the minimum counts; false: it must be strictly greater. */
  inclusive: boolean;
}

export function meetsMinimum(amountAtomic: bigint, minimum: MinimumDeposit): boolean {
  return minimum.inclusive ? amountAtomic >= minimum.amountAtomic : amountAtomic > minimum.amountAtomic;
}
