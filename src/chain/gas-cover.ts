/**
 * What a payer must hold in the network's native token for its transactions to be accepted and
 * mined, and what a top-up sends (pure: no chain reads). See docs/decisions/custody-and-chains.md,
 * "Gas that covers the transaction".
 */

/** One transaction as the node prices it before it runs: its gas limit, its fee cap per gas and the value it sends. */
export interface GasCost {
  gasLimit: bigint;
  maxFeePerGas: bigint;
  valueWei: bigint;
}

/** What a node asks a sender to hold for one transaction: gas limit × maxFeePerGas + value. */
export function upfrontWei(tx: GasCost): bigint {
  return tx.gasLimit * tx.maxFeePerGas + tx.valueWei;
}

/**
 * The most this transaction, or any fee-bump replacement of it at its nonce, can ask up front: a
 * replacement keeps the gas limit and value and offers at most the cap. Only one of them is ever
 * mined, so a payer that holds this never needs a top-up while its transaction is stuck.
 */
export function coverWei(tx: GasCost, capWei: bigint): bigint {
  const perGas = tx.maxFeePerGas > capWei ? tx.maxFeePerGas : capWei;
  return upfrontWei({ ...tx, maxFeePerGas: perGas });
}

/**
 * What a payer must hold for `pending`, its transactions not mined yet (those it is about to sign and
 * those in the mempool): a node counts every pending transaction of a sender against its balance, and
 * each may be replaced up to the cap. Never less than the network's floor.
 */
export function payerNeedWei(pending: readonly GasCost[], capWei: bigint, floorWei: bigint): bigint {
  const need = pending.reduce((sum, tx) => sum + coverWei(tx, capWei), 0n);
  return need > floorWei ? need : floorWei;
}

/** What a top-up sends: what is missing, rounded up to a whole number of the network's top-up steps; 0 when nothing is. */
export function topUpWei(balanceWei: bigint, needWei: bigint, stepWei: bigint): bigint {
  if (stepWei <= 0n) throw new RangeError(`a top-up step must be positive (got ${stepWei})`);
  if (balanceWei >= needWei) return 0n;
  const missing = needWei - balanceWei;
  return ((missing + stepWei - 1n) / stepWei) * stepWei;
}
