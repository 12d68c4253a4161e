import { z } from 'zod';

const ZWei = z.string().regex(/^[1-9]\d{0,77}$/, 'a positive integer string (wei)');

/**
 * A network's gas settings, in wei of its native token (ETH, POL...): the fee cap and tip of every
 * transaction the service signs (src/chain/fees.ts), and how its gas treasury tops payers up.
 */
export const ZGasConfig = z.object({
  /** No transaction offers more per gas; above it the send waits for the base fee to come down. */
  maxFeePerGasWei: ZWei.optional(),
  /** The tip (maxPriorityFeePerGas) of a new transaction. */
  priorityFeeWei: ZWei.optional(),
  /** The least a payer is made to hold before it sends, whatever its legs cost (src/chain/gas-cover.ts). */
  minBalanceWei: ZWei.optional(),
  /** The step of a top-up from the network's gas treasury: what is missing, rounded up to whole steps. */
  topUpWei: ZWei.optional(),
});
export type TGasConfig = z.output<typeof ZGasConfig>;

/** The settings as bigints, each defaulted (an Ethereum-like network). */
export interface GasSettings {
  maxFeePerGasWei: bigint;
  priorityFeeWei: bigint;
  minBalanceWei: bigint;
  topUpWei: bigint;
}

export const DEFAULT_GAS: GasSettings = {
  maxFeePerGasWei: 500_000_000_000n, // 500 gwei
  priorityFeeWei: 1_000_000_000n, // 1 gwei
  minBalanceWei: 5_000_000_000_000_000n, // 0.005 native
  topUpWei: 10_000_000_000_000_000n, // 0.01 native
};

export function gasSettings(network: { gas?: TGasConfig }): GasSettings {
  const g = network.gas ?? {};
  const or = (v: string | undefined, d: bigint) => (v === undefined ? d : BigInt(v));
  return {
    maxFeePerGasWei: or(g.maxFeePerGasWei, DEFAULT_GAS.maxFeePerGasWei),
    priorityFeeWei: or(g.priorityFeeWei, DEFAULT_GAS.priorityFeeWei),
    minBalanceWei: or(g.minBalanceWei, DEFAULT_GAS.minBalanceWei),
    topUpWei: or(g.topUpWei, DEFAULT_GAS.topUpWei),
  };
}
