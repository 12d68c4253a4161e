/**
 * Quotas count in fixed windows aligned to the epoch (src/http/middleware/shared-quota.ts). A test that
 * spends a quota and expects the refusal must not straddle a window's end, where the count starts
 * over: when less than `marginMs` of the window is left, this waits for the next one to begin.
 */
export async function awayFromWindowEnd(windowSeconds: number, marginMs = 10_000): Promise<void> {
  const windowMs = windowSeconds * 1000;
  const left = windowMs - (Date.now() % windowMs);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 50));
}
