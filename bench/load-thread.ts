import { randomUUID } from 'node:crypto';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { prioritiseThisThread, type Prioritised } from './priority';

/** One POST of an open loop, as the client saw it. */
export interface LoadAnswer {
  /** The status, or `hung` (no answer within the deadline) or `connection failed`. */
  outcome: number | 'hung' | 'connection failed';
  code?: string;
  retryAfter: string | null;
  ms: number;
}

export interface LoadSpec {
  url: string;
  headers: Record<string, string>;
  body: string;
  count: number;
  ratePerSecond: number;
  hangMs: number;
  /** The thread's own nice value while it sends (bench/priority.ts); 0 leaves it as it is. */
  nice: number;
}

export interface LoadRun {
  answers: LoadAnswer[];
  /** The nice value the thread ran at, and why not the one asked for. */
  priority: Prioritised;
}

async function post(spec: LoadSpec): Promise<LoadAnswer> {
  const t0 = performance.now();
  try {
    const res = await fetch(spec.url, {
      method: 'POST',
      headers: { ...spec.headers, 'idempotency-key': randomUUID() },
      body: spec.body,
      signal: AbortSignal.timeout(spec.hangMs),
    });
    const body = (await res.json().catch(() => ({}))) as { error?: { code?: string } };
    return { outcome: res.status, code: body.error?.code, retryAfter: res.headers.get('retry-after'), ms: performance.now() - t0 };
  } catch (err) {
    const outcome = err instanceof Error && err.name === 'TimeoutError' ? 'hung' : 'connection failed';
    return { outcome, retryAfter: null, ms: performance.now() - t0 };
  }
}

async function run(spec: LoadSpec): Promise<LoadAnswer[]> {
  const interval = 1000 / spec.ratePerSecond;
  const started = performance.now();
  const answers: Promise<LoadAnswer>[] = [];
  for (let i = 0; i < spec.count; i += 1) {
    const wait = started + i * interval - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    answers.push(post(spec));
  }
  return Promise.all(answers);
}

/**
 * An open loop of POSTs from a thread of its own: the bench's main thread also runs the worker, whose
 * activations would otherwise delay reading the answers and be counted as the API's latency.
 */
export function openLoopInThread(spec: LoadSpec): Promise<LoadRun> {
  return new Promise((resolve, reject) => {
    // A TypeScript entry needs tsx's loader in the thread before it is read.
    const entry = `require('tsx/cjs'); require(${JSON.stringify(__filename)});`;
    const thread = new Worker(entry, { eval: true, workerData: spec });
    thread.once('message', (run: LoadRun) => resolve(run));
    thread.once('error', reject);
    thread.once('exit', (code) => code !== 0 && reject(new Error(`the load thread exited with ${code}`)));
  });
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  const spec = workerData as LoadSpec;
  const priority = prioritiseThisThread(spec.nice);
  void run(spec).then((answers) => port.postMessage({ answers, priority } satisfies LoadRun));
}
