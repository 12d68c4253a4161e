/**
 * The network's block time as the scanner measures it: a moving average of the time between the
 * blocks it reads, from their timestamps, weighted by the blocks each scan covered (about the last
 * BLOCK_TIME_WINDOW blocks count). Pure: the scanner's activity stores what it answers.
 */
export const BLOCK_TIME_WINDOW = 20;

/** Where the scanner was (its stored cursor) and where one scan took it. */
export interface HeadSample {
  /** The next block to read: the head the scanner has read is the block before. */
  nextFromBlock: bigint;
  /** The timestamp of the block before nextFromBlock, or null when not known (a reorg moved the cursor). */
  headBlockAt: Date | null;
}

/**
 * The average after a scan moved the cursor from `previous` to `next`. Only a scan that went forward
 * from a head of known time measures anything; any other keeps the average as it was (null: none yet).
 */
export function nextBlockTimeMs(previous: (HeadSample & { blockTimeMs: number | null }) | null, next: HeadSample): number | null {
  const kept = previous?.blockTimeMs ?? null;
  if (!previous?.headBlockAt || !next.headBlockAt || next.nextFromBlock <= previous.nextFromBlock) return kept;
  const blocks = Number(next.nextFromBlock - previous.nextFromBlock);
  const sample = Math.max(0, next.headBlockAt.getTime() - previous.headBlockAt.getTime()) / blocks;
  if (kept === null) return Math.round(sample);
  const weight = Math.min(1, blocks / BLOCK_TIME_WINDOW);
  return Math.round(kept + (sample - kept) * weight);
}
