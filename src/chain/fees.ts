/**
 * EIP-1559 fees for the transactions the service signs, under a network's cap (pure: no chain reads).
 * See docs/decisions/custody-and-chains.md, "Gas as on a real chain".
 */

/** A network's fee settings, in wei: the most any transaction may offer per gas, and the tip it offers. */
export interface FeePolicy {
  maxFeePerGasWei: bigint;
  priorityFeeWei: bigint;
}

/** The two fee fields of a type-2 transaction. */
export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** send: sign with these; wait: the base fee plus the tip is above the cap, so nothing is signed now. */
export type InitialFeeDecision = { kind: 'send'; fees: Fees } | { kind: 'wait'; neededWei: bigint };

/** keep: the transaction can still pay; replace: sign again with these; capped: a replacement would pass the cap. */
export type ReplacementDecision = { kind: 'keep' } | { kind: 'replace'; fees: Fees } | { kind: 'capped'; neededWei: bigint };

/** The common wallet rule: twice the latest base fee plus the tip (room for about six full blocks of rises), capped. */
export function initialFees(baseFeeWei: bigint, policy: FeePolicy): InitialFeeDecision {
  const tip = policy.priorityFeeWei;
  const needed = baseFeeWei + tip;
  if (needed > policy.maxFeePerGasWei) return { kind: 'wait', neededWei: needed };
  return { kind: 'send', fees: { maxFeePerGas: min(2n * baseFeeWei + tip, policy.maxFeePerGasWei), maxPriorityFeePerGas: tip } };
}

/** A transaction whose fee cap no longer covers the base fee plus its own tip: it waits in the mempool. */
export function isUnderpriced(fees: Fees, baseFeeWei: bigint): boolean {
  return fees.maxFeePerGas < baseFeeWei + fees.maxPriorityFeePerGas;
}

/**
 * The fees of a replacement at the same nonce: at least 10% more on both fields than the transaction it
 * replaces (a node refuses less), and what a new transaction would offer now; never above the cap.
 */
export function replacementFees(prev: Fees, baseFeeWei: bigint, policy: FeePolicy): ReplacementDecision {
  if (!isUnderpriced(prev, baseFeeWei)) return { kind: 'keep' };
  const tip = max(bumped(prev.maxPriorityFeePerGas), policy.priorityFeeWei);
  const bumpedMax = bumped(prev.maxFeePerGas);
  const needed = max(bumpedMax, baseFeeWei + tip);
  if (needed > policy.maxFeePerGasWei) return { kind: 'capped', neededWei: needed };
  return {
    kind: 'replace',
    fees: { maxFeePerGas: min(max(bumpedMax, 2n * baseFeeWei + tip), policy.maxFeePerGasWei), maxPriorityFeePerGas: tip },
  };
}

/** +10%, rounded up (and at least +1 wei), the smallest raise a node accepts for a replacement. */
function bumped(wei: bigint): bigint {
  return max((wei * 11n + 9n) / 10n, wei + 1n);
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);
