/**
 * The fee split (spec: fees, model `deducted_at_final_settlement`), one rule for Payments and
 * deposits alike: the platform's fee and the partner's fee are basis points of the gross amount, each
 * rounded down to a whole atomic unit; the net takes the remainder, never less than zero. Amounts in
 * atomic units (bigint), rates in whole basis points.
 *
 * Pure: the DepositWorkflow computes a deposit's fees through its machine, so what this returns is
 * part of recorded workflow histories. Its results must never change for any input
 * (test/unit/fees.test.ts holds it to the rule those histories were made under).
 */
export interface FeeRates {
  platformFeeBps: number;
  partnerFeeBps: number;
}

export interface FeeSplit {
  platformAtomic: bigint;
  partnerAtomic: bigint;
  netAtomic: bigint;
}

const BPS_PER_WHOLE = 10_000n;

export function splitFees(grossAtomic: bigint, rates: FeeRates): FeeSplit {
  const platformAtomic = (grossAtomic * BigInt(rates.platformFeeBps)) / BPS_PER_WHOLE;
  const partnerAtomic = (grossAtomic * BigInt(rates.partnerFeeBps)) / BPS_PER_WHOLE;
  const netAtomic = grossAtomic - platformAtomic - partnerAtomic;
  return { platformAtomic, partnerAtomic, netAtomic: netAtomic > 0n ? netAtomic : 0n };
}
