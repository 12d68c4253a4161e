import { AsyncLocalStorage } from 'node:async_hooks';
import { trace } from '@opentelemetry/api';

/**
 * A request's named steps: each is a span `step.<name>` of the request's trace (its SQL and RPC calls
 * under it; the bench's "where the time goes" reads them), and, when enabled (SERVER_TIMING), an entry
 * of the answer's `Server-Timing` header. With tracing off the span is the API's no-op.
 */
const steps = new AsyncLocalStorage<Map<string, number>>();
const tracer = trace.getTracer('partner-payments');

export async function timed<T>(step: string, fn: () => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(`step.${step}`, async (span) => {
    const into = steps.getStore();
    const started = performance.now();
    try {
      return await fn();
    } finally {
      span.end();
      into?.set(step, (into.get(step) ?? 0) + performance.now() - started);
    }
  });
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
