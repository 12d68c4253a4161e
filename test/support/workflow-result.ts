import { clockHolders, describeWorkflow } from './diagnose';
import type { Harness } from './harness';

/**
 * Long enough for any workflow the suite runs; a bound, not a timing assertion. A wait that skips
 * minutes of workflow time walks every live workflow of the shared engine through its timers (its
 * pollers fire, activities run), and late in the suite that alone can take minutes of wall time.
 * Under the default test timeout (5 minutes), so the wait that fails names its workflow.
 */
const DEFAULT_TIMEOUT_MS = 240_000;

/**
 * Waits that unlock the time-skipping server's clock take turns. The server counts locks: two
 * unlocks at once can leave the count unbalanced, and time then stays locked for the rest of the
 * shard (a 30 s backoff takes 30 s of wall time, a 5-minute one fails its test).
 */
let lane: Promise<unknown> = Promise.resolve();

function inTimeSkippingLane<T>(fn: () => Promise<T>): Promise<T> {
  const turn = lane.then(fn);
  lane = turn.catch(() => undefined);
  return turn;
}

/** Lets the test server skip ms of workflow time (its timers fire), in turn with the other skips. */
export function skipTime(h: Pick<Harness, 'env'>, ms: number): Promise<void> {
  return inTimeSkippingLane(() => h.env.sleep(ms));
}

/**
 * The one way a test waits for a workflow's result: raced against a timeout, so a workflow that never
 * finishes fails its test, naming the workflow, its status and its pending activities, instead of
 * hanging the suite. Waiting on the result is also what lets the time-skipping server jump timers.
 */
export function awaitWorkflowResult<T = unknown>(
  h: Pick<Harness, 'env'>,
  workflowId: string,
  opts: { timeoutMs?: number } = {},
): Promise<T> {
  return inTimeSkippingLane(() => resultWithin<T>(h, workflowId, opts));
}

async function resultWithin<T>(h: Pick<Harness, 'env'>, workflowId: string, opts: { timeoutMs?: number }): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const timedOut = Symbol('timed out');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof timedOut>((resolve) => {
    timer = setTimeout(() => resolve(timedOut), timeoutMs);
  });
  try {
    const outcome = await Promise.race([h.env.client.workflow.getHandle(workflowId).result() as Promise<T>, timeout]);
    if (outcome === timedOut) {
      const holders = await clockHolders(h).catch((err: unknown) => [`not listed (${String(err)})`]);
      throw new Error(
        `workflow did not finish within ${timeoutMs} ms: ${await describeWorkflow(h, workflowId)}; pending on the server: ${holders.join('; ') || 'nothing'}`,
      );
    }
    return outcome as T;
  } finally {
    clearTimeout(timer);
  }
}
