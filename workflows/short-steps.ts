import { patched, proxyActivities, proxyLocalActivities, type ActivityInterfaceFor } from '@temporalio/workflow';
import { UNTIL_DONE } from './retry-profiles';

/**
 * The patch that runs a Payment's and a deposit's short steps locally (docs/workflow-versioning.md):
 * each database write and chain read runs as a local activity inside the workflow task that needs it,
 * not as an activity task of its own, and a settlement's first confirmation check waits for a block.
 */
export const SHORT_STEPS_LOCAL = 'short-steps-local';

const SHORT_STEP = { ...UNTIL_DONE, startToCloseTimeout: '30s' } as const;

/**
 * The proxy a run's short steps go through, and whether the run is under the patch, decided once when
 * the run starts: a run recorded before the patch keeps its activity tasks to the end. A local step
 * has the same budget and retries as the activity did, and is idempotent like it: a worker that dies
 * before the task's completion is recorded runs it again (the crash matrix kills at both ends of
 * each). Money out (a signed send) and a provider's calls stay activity tasks: their own budget and
 * timeouts are the workflow's to see.
 *
 * `activityTasks` (tests only, the policy's `shortStepsLocal: false`): the time-skipping test server
 * skips time while a workflow task runs a local activity, so the task times out and runs again; the
 * test harness keeps them activity tasks except where it tests the local ones.
 */
export function shortSteps<A extends object>(opts: { activityTasks: boolean }): { steps: ShortSteps<A>; patched: boolean } {
  const underPatch = patched('short-steps-local'); // SHORT_STEPS_LOCAL (a literal: the history-coverage test reads it)
  // Called alike: the local proxy differs only in how per-call options are given (unused here).
  const steps = underPatch && !opts.activityTasks ? (proxyLocalActivities<A>(SHORT_STEP) as ShortSteps<A>) : proxyActivities<A>(SHORT_STEP);
  return { steps, patched: underPatch };
}

export type ShortSteps<A> = ActivityInterfaceFor<A>;
