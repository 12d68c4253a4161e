import { condition, sleep } from '@temporalio/workflow';

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
