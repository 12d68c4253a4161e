/**
 * Live finality (docs/decisions/custody-and-chains.md, "Live finality"): how deep one transaction of
 * ours (an incoming transfer, a settlement leg) is, computed when it is read from what the chain scanner
 * stored. Pure, so every read (API, checkout, dashboard) answers the same for the same inputs.
 */

/** The transaction whose finality is asked: blockNumber is where the scanner last read it mined, null when not (yet, or any more). */
export interface FinalitySubject {
  chainId: number;
  transactionHash: string;
  blockNumber: bigint | null;
}

/** What the scanner stored of its network: the last block it read (null: none yet), that block's time and the measured block time. */
export interface ScannedHead {
  block: bigint | null;
  at: Date | null;
  blockTimeMs: number | null;
}

/** The network's settings that finality reads. */
export interface FinalityNetwork {
  confirmations: number;
  /** The configured block time, used until the scanner has measured one. */
  blockTimeMs: number;
}

export interface Finality {
  chainId: number;
  transactionHash: string;
  blockNumber: number | null;
  confirmations: number;
  confirmationsRequired: number;
  finalized: boolean;
  estimatedFinalAt: string | null;
}

/** Blocks on top of `blockNumber` the head has, its own included: 0 when not mined or not read yet. */
export function confirmationsAt(blockNumber: bigint | null, head: bigint | null): number {
  if (blockNumber === null || head === null || head < blockNumber) return 0;
  return Number(head - blockNumber + 1n);
}

/**
 * One transaction's finality. The estimate counts the blocks still needed at the measured block time
 * (the configured one until measured) from the head block's time, never earlier than now; null once
 * final, and while not mined (nothing to count from yet).
 */
export function finalityOf(subject: FinalitySubject, head: ScannedHead, network: FinalityNetwork, now: Date): Finality {
  const confirmations = confirmationsAt(subject.blockNumber, head.block);
  const required = network.confirmations;
  const finalized = confirmations >= required;
  let estimatedFinalAt: string | null = null;
  if (!finalized && subject.blockNumber !== null) {
    const blockTimeMs = head.blockTimeMs ?? network.blockTimeMs;
    const from = head.at ?? now;
    const at = from.getTime() + (required - confirmations) * blockTimeMs;
    estimatedFinalAt = new Date(Math.max(at, now.getTime())).toISOString();
  }
  return {
    chainId: subject.chainId,
    transactionHash: subject.transactionHash,
    blockNumber: subject.blockNumber === null ? null : Number(subject.blockNumber),
    confirmations,
    confirmationsRequired: required,
    finalized,
    estimatedFinalAt,
  };
}

/** Read by the scanner in a block: an incoming transfer in none was taken away by a reorg. */
export const onChain = (f: { blockNumber: number | null }): boolean => f.blockNumber !== null;

type Followed = ReadonlyArray<{ finalized: boolean; blockNumber: number | null }>;

/**
 * Whether a resource's finality can still change by itself, so a page showing it keeps asking: a
 * transaction not final yet, or money on chain while the resource is not at rest (its settlement is
 * still to be sent, and its legs to appear). Nothing on chain and nothing in flight: nothing to follow.
 * An incoming transfer a reorg took away no longer holds up a resource at rest: nothing waits on it.
 */
export function finalityStillMoving(f: { transfers: Followed; settlement: Followed }, atRest: boolean): boolean {
  const all = [...(atRest ? f.transfers.filter(onChain) : f.transfers), ...f.settlement];
  return all.some((x) => !x.finalized) || (!atRest && all.length > 0);
}
