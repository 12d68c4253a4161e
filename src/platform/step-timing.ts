import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Per-request step timings, answered as a `Server-Timing` header when enabled (SERVER_TIMING), so the
 * bench can say which step of a create costs what without a profiler. Off, `timed` is one lookup.
 */
const steps = new AsyncLocalStorage<Map<string, number>>();

export async function timed<T>(step: string, fn: () => Promise<T>): Promise<T> {
  const into = steps.getStore();
  if (!into) return fn();
  const started = performance.now();
  try {
    return await fn();
  } finally {
    into.set(step, (into.get(step) ?? 0) + performance.now() - started);
  }
}

/** Runs `fn` collecting its steps; `report` gets them in the order they first ran. */
export async function collectSteps<T>(fn: () => Promise<T>, report: (timings: Map<string, number>) => void): Promise<T> {
  const timings = new Map<string, number>();
  try {
    return await steps.run(timings, fn);
  } finally {
    report(timings);
  }
}

export function serverTimingHeader(timings: Map<string, number>, totalMs: number): string {
  return [...timings, ['total', totalMs] as const].map(([name, ms]) => `${name};dur=${ms.toFixed(2)}`).join(', ');
}
