import { condition, sleep, workflowInfo } from '@temporalio/workflow';

/**
 * Waits until fn() holds or ms pass; answers fn(). Unlike condition(fn, ms) it never cancels its
 * timer (a won race leaves it to fire unobserved): Temporal's Java time-skipping test server can wedge
 * a workflow that cancels a timer at the moment it fires.
 */
export async function wakeOn(fn: () => boolean, ms: number): Promise<boolean> {
  let fired = false;
  void sleep(ms).then(() => {
    fired = true;
  });
  await condition(() => fn() || fired);
  return fn();
}

/** Events a long-running workflow's run may reach before it continues as new. */
export const MAX_RUN_EVENTS = 500;

/**
 * True once a long-running workflow (scanner, dispatcher) should continue as new: its history is
 * replayed in full whenever a worker has it out of its cache, so a run is kept short.
 */
export function runIsLong(): boolean {
  const info = workflowInfo();
  return info.historyLength >= MAX_RUN_EVENTS || info.continueAsNewSuggested;
}
