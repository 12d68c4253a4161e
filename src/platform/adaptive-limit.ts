/**
 * How many writes an API process lets run at once, learned from how long they take (additive
 * increase, multiplicative decrease, as TCP's congestion window and Netflix's concurrency limits do).
 * Past the engine's rate, more writes in flight only queue inside the process: each takes longer, its
 * event loop lags, and even a refusal waits behind them. So while a write takes more than `tolerance`
 * times the fastest recent write of its route (routes differ: one reads the chain, one inserts a row),
 * the limit shrinks, at most once per such write's time; while writes take about their unloaded
 * time, it grows by one per limit's worth of completions.
 */
export interface AdaptiveLimitPolicy {
  /** The ceiling, and the start: an unloaded process runs as many as it has room for. */
  maxLimit: number;
  minLimit: number;
  /** A write slower than this times the recent fastest signals queueing. */
  tolerance: number;
  /** The recent fastest is never taken below this: a few fast writes must not make every normal one look slow. */
  floorMs: number;
  /** How many recent writes of a route its fastest is taken over. */
  window: number;
  /** The factor a slow write shrinks the limit by. */
  backoff: number;
}

export const DEFAULT_LIMIT_POLICY: Omit<AdaptiveLimitPolicy, 'maxLimit'> = {
  minLimit: 2,
  tolerance: 2,
  floorMs: 25,
  window: 250,
  backoff: 0.8,
};

export interface LimitState {
  limit: number;
  /** Each route's latest writes' times, oldest first, at most `window`. */
  recent: Readonly<Record<string, readonly number[]>>;
  /** When the limit last shrank (ms, the caller's clock). */
  shrunkAt: number;
}

export function initialLimit(policy: AdaptiveLimitPolicy): LimitState {
  return { limit: policy.maxLimit, recent: {}, shrunkAt: -Infinity };
}

export interface WriteTaken {
  route: string;
  tookMs: number;
  /** When it ended (ms, the caller's clock). */
  nowMs: number;
}

/** The state after a write ended. Pure. */
export function nextLimit(policy: AdaptiveLimitPolicy, state: LimitState, { route, tookMs, nowMs }: WriteTaken): LimitState {
  const times = [...(state.recent[route] ?? []).slice(-(policy.window - 1)), tookMs];
  const recent = { ...state.recent, [route]: times };
  const fastest = Math.max(policy.floorMs, Math.min(...times));
  const slow = tookMs > policy.tolerance * fastest;
  if (slow) {
    // Once per slow write's time: the writes in flight with it saw the same queue.
    if (nowMs - state.shrunkAt < tookMs) return { ...state, recent };
    return { limit: Math.max(policy.minLimit, state.limit * policy.backoff), recent, shrunkAt: nowMs };
  }
  return { ...state, limit: Math.min(policy.maxLimit, state.limit + 1 / state.limit), recent };
}
