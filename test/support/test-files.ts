import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** The suite's root: test/. */
export const TEST_ROOT = path.resolve(__dirname, '..');

function walk(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) return name === 'support' ? [] : walk(full);
      return name.endsWith('.test.ts') ? [full] : [];
    });
}

/**
 * Suites that run their own stack in a child process (`npm start`, the simulation, a crash cell), with
 * the Temporal CLI's dev server: `npm run test:stacks` (TEST_STACKS=1) runs them, and only them, so a
 * cold `npm test` needs no Temporal CLI.
 */
const STACKS = [
  `${path.sep}crash${path.sep}`,
  `${path.sep}simulation${path.sep}`,
  `${path.sep}runtime${path.sep}shutdown.test.ts`,
  `${path.sep}runtime${path.sep}traces.test.ts`,
];
const isStack = (file: string) => STACKS.some((part) => file.includes(part));

/**
 * The test files a run loads, in path order: the stack suites or the rest, narrowed by TEST_FILTER
 * (comma-separated path substrings: a file runs when its path holds any of them).
 */
export function suiteFiles(env: NodeJS.ProcessEnv = process.env): string[] {
  const stacksOnly = env.TEST_STACKS === '1';
  const only = env.TEST_FILTER?.split(',').filter(Boolean);
  return walk(TEST_ROOT)
    .filter((file) => isStack(file) === stacksOnly)
    .filter((file) => !only || only.some((part) => file.includes(part)));
}

/**
 * Files whose tests stop the shared worker (a 503 the engine can't answer, a backlog, a worker
 * restart). Their process's worker caches no workflow: the time-skipping server never moves a stopped
 * worker's sticky tasks back, so a cached workflow would stall, and with it the server's clock.
 * `npm test` runs them in a shard of their own; every other shard caches workflows (a third less CPU).
 */
const STOP_THE_WORKER = [
  'api/idempotency.test.ts',
  'api/openapi-examples.test.ts',
  'deposits/scanner-restart.test.ts',
  'metrics/metrics.test.ts',
  'payments/expiry-cancel.test.ts',
];

export function stopsTheWorker(file: string): boolean {
  const relative = path.relative(TEST_ROOT, file).split(path.sep).join('/');
  return STOP_THE_WORKER.includes(relative);
}

/**
 * Files that leave the time-skipping server's clock locked: they terminate runs of the shared worker
 * that may have a task out, and the server never releases that task's clock lock, so every later wait
 * that skips time in the shard stalls (a 10-minute expiry never fires). They run after every other
 * file of their shard, whatever the order seed. Found by the shuffled order: workflows/continue-as-new
 * before checkout/hosted-checkout stalls its expiry test, every time.
 */
const LEAVE_THE_CLOCK_LOCKED = ['workflows/continue-as-new.test.ts'];

export function runsLast(file: string): boolean {
  const relative = path.relative(TEST_ROOT, file).split(path.sep).join('/');
  return LEAVE_THE_CLOCK_LOCKED.includes(relative);
}

/** The files this process loads: TEST_FILES (a shard of `npm test`, in the order it drew), else the suite TEST_FILTER selects, in path order. */
export function processFiles(env: NodeJS.ProcessEnv = process.env): string[] {
  return env.TEST_FILES?.split('\n').filter(Boolean) ?? suiteFiles(env);
}
