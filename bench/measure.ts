/** Timing helpers shared by the bench phases. Latencies are milliseconds. */

export interface Latency {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  count: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

export function latency(samples: number[]): Latency {
  const s = [...samples].sort((a, b) => a - b);
  return { p50Ms: round1(percentile(s, 50)), p99Ms: round1(percentile(s, 99)), maxMs: round1(s.at(-1) ?? NaN), count: s.length };
}

export function showLatency(l: Latency): string {
  return `p50 ${l.p50Ms.toFixed(1)} ms   p99 ${l.p99Ms.toFixed(1)} ms`;
}

export interface Rate {
  perSecond: number;
  latency: Latency;
}

/**
 * `count` operations from `concurrency` clients, each starting its next as soon as one answers. An
 * operation that answers false (refused: the service shed it) counts in neither the rate nor the latency.
 */
export async function closedLoop(count: number, concurrency: number, op: (i: number) => Promise<boolean | void>): Promise<Rate> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const t0 = performance.now();
        if ((await op(i)) !== false) latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { perSecond: round1(latencies.length / seconds), latency: latency(latencies) };
}

/** `count` operations started at `ratePerSecond` whatever the answers (so a slow service queues); a refused one (false) has no latency. */
export async function openLoop(count: number, ratePerSecond: number, op: (i: number) => Promise<boolean | void>): Promise<number[]> {
  const latencies: number[] = [];
  const interval = 1000 / ratePerSecond;
  const started = performance.now();
  const inflight: Promise<void>[] = [];
  let failure: unknown;
  for (let i = 0; i < count; i += 1) {
    const wait = started + i * interval - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    // Settled, never left rejected: a failed request surfaces after the others, not as a crash.
    inflight.push(
      (async () => {
        const t0 = performance.now();
        if ((await op(i)) !== false) latencies.push(performance.now() - t0);
      })().catch((err: unknown) => {
        failure ??= err;
      }),
    );
  }
  await Promise.all(inflight);
  if (failure !== undefined) throw failure;
  return latencies;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
