/**
 * Every test and hook gets a timeout unless it sets its own, so that a hung one fails naming itself
 * and the run goes on. Node 20's --test-timeout (in `npm test`) bounds each test file's process,
 * and each shard of the suite is one file (test/index.ts): it only bounds the whole shard. Node 22 applies the flag
 * to each test; on Node 20 this does it, through the options node:test already has.
 *
 * 5 minutes: the slowest tests take about 2 under load on 2 shared cores (a Payment through 100
 * transfers and two continue-as-new runs), and a hang is cut long before CI's limit. TEST_TIMEOUT_MS
 * sets another. Tests that wait on a whole stack of their own (the crash matrix, the simulation) set
 * their own, larger, timeout.
 */
export const DEFAULT_TEST_TIMEOUT_MS = 300_000;

type Registrar = ((...args: unknown[]) => unknown) & Record<string, unknown>;

/** The options object of a test(name?, options?, fn?) call, given a timeout when it has none. */
function withTimeout(args: unknown[], timeout: number): unknown[] {
  const at = args.findIndex((a) => a !== null && typeof a === 'object');
  if (at >= 0) {
    const options = args[at] as { timeout?: number };
    return options.timeout === undefined ? args.map((a, i) => (i === at ? { ...options, timeout } : a)) : args;
  }
  const after = typeof args[0] === 'string' ? 1 : 0;
  return [...args.slice(0, after), { timeout }, ...args.slice(after)];
}

export function installDefaultTimeouts(timeout = Number(process.env.TEST_TIMEOUT_MS ?? DEFAULT_TEST_TIMEOUT_MS)): number {
  if (!Number.isInteger(timeout) || timeout <= 0)
    throw new Error(`TEST_TIMEOUT_MS must be a positive number of milliseconds, got ${process.env.TEST_TIMEOUT_MS}`);
  // The module object tests read test, it, before... from at each call (CommonJS, as tsx runs them).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const runner = require('node:test') as Record<string, Registrar>;
  for (const name of ['test', 'it']) {
    const original = runner[name]!;
    const wrapped = Object.assign((...args: unknown[]) => original(...withTimeout(args, timeout)), original);
    wrapped.only = (...args: unknown[]) => (original.only as Registrar)(...withTimeout(args, timeout));
    runner[name] = wrapped;
  }
  for (const name of ['before', 'after', 'beforeEach', 'afterEach']) {
    const original = runner[name]!;
    runner[name] = Object.assign(
      (fn: unknown, options?: { timeout?: number }) => original(fn, { ...options, timeout: options?.timeout ?? timeout }),
      original,
    );
  }
  return timeout;
}
