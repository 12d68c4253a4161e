import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { killWithParent } from '../src/embedded/process';
import { prioritiseProcess, type Prioritised } from './priority';
import { readSchedule, type ThreadSchedule } from './schedstat';

const CHILD_FLAG = 'BENCH_LOAD_PROCESS';

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
  /** The process's nice value while it sends (bench/priority.ts); 0 leaves it as it is. */
  nice: number;
}

export interface LoadRun {
  answers: LoadAnswer[];
  /** The nice value the process ran at, and why not the one asked for. */
  priority: Prioritised;
  /** Its main thread's time on a core and waiting for one, before and after it sent: a client that waits for a core adds that wait to every answer's time. */
  schedule: { before: ThreadSchedule; after: ThreadSchedule };
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
 * An open loop of POSTs from a process of its own, in a session of its own: the partners' side, kept
 * off the bench's process (whose main thread runs the worker, whose activations would delay reading
 * the answers) and, at `spec.nice`, off the run queue that the engine's threads fill (measured: a
 * thread of the bench's process waited for a core 301 ms of every second, and every wait was counted
 * as the API's latency).
 */
export function openLoopInProcess(spec: LoadSpec): Promise<LoadRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', __filename], {
      env: { ...process.env, [CHILD_FLAG]: '1' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      detached: true,
    });
    killWithParent(child);
    let priority: Prioritised = { nice: 0 };
    child.once('spawn', () => {
      priority = prioritiseProcess(child.pid!, spec.nice);
      child.send(spec);
    });
    child.once('message', (run: Omit<LoadRun, 'priority'>) => resolve({ ...run, priority }));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`the load process exited with ${code}`));
    });
  });
}

if (process.env[CHILD_FLAG] === '1' && process.send) {
  const send = process.send.bind(process);
  process.once('message', (spec: LoadSpec) => {
    const self = `/proc/${process.pid}/task/${process.pid}/schedstat`;
    const before = readSchedule(self);
    void run(spec).then((answers) => {
      const result: Omit<LoadRun, 'priority'> = { answers, schedule: { before, after: readSchedule(self) } };
      send(result, () => process.exit(0));
    });
  });
}
