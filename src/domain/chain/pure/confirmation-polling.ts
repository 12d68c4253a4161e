/**
 * How long a workflow waits before it reads a still-confirming transfer again. Fast at first (the next
 * block often confirms it): `firstMs` doubling up to `maxMs`, for `fastRounds` reads. A transfer that
 * stays unconfirmed longer (back in the mempool after a reorg, or never mined) is read ever less
 * often: 30 s, doubling every 10 reads, up to 10 minutes, so a stuck transfer costs little forever.
 * Pure: the workflows import it.
 */
export function confirmationPollMs(round: number, fast: { firstMs: number; maxMs: number; fastRounds: number }): number {
  if (round < fast.fastRounds) return Math.min(fast.firstMs * 2 ** Math.min(round, 30), fast.maxMs);
  return Math.min(SLOW_FIRST_MS * 2 ** Math.floor((round - fast.fastRounds) / 10), SLOW_MAX_MS);
}

const SLOW_FIRST_MS = 30_000;
const SLOW_MAX_MS = 600_000;

/**
 * The safety-net timer of a workflow that the chain scanner wakes on every new block: a block is what
 * can confirm anything, so the read happens on the block's signal, and the timer only covers a lost
 * signal (a scanner down, a fan-out over its cap). It is the polling schedule, never faster than
 * SAFETY_NET_FLOOR_MS: a lost signal costs latency, never correctness. Rounds count the timer's
 * firings only (a block's wake re-reads within the same round), so a budget counted in rounds (a
 * settlement's confirmation checks) still measures time, not blocks.
 */
export function safetyNetMs(
  round: number,
  fast: { firstMs: number; maxMs: number; fastRounds: number },
  floorMs = SAFETY_NET_FLOOR_MS,
): number {
  return Math.max(confirmationPollMs(round, fast), floorMs);
}

/** The floor a policy asks for (absent: SAFETY_NET_FLOOR_MS; runs recorded before it existed keep it). */
export function safetyNetFloorMs(policy: { safetyNetFloorSeconds?: number }): number {
  return policy.safetyNetFloorSeconds === undefined ? SAFETY_NET_FLOOR_MS : policy.safetyNetFloorSeconds * 1000;
}

export const SAFETY_NET_FLOOR_MS = 2_000;
