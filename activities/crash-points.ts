import { Context } from '@temporalio/activity';
import { activityCrashPoint, crashPoint, withCrashContext } from '../src/platform/crash-points';

type AnyFn = (...args: never[]) => unknown;

/**
 * Every activity between two crash points (src/platform/crash-points.ts): before its body runs, and
 * after the body returned but before Temporal records the completion, the two places a worker's death
 * leaves a side effect undone or done-but-unrecorded. No-ops unless CRASH_AT / CRASH_POINTS_TRACE is set.
 */
export function withCrashPoints<T extends Record<string, AnyFn>>(activities: T): T {
  const wrapped: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const [name, fn] of Object.entries(activities)) {
    // The run and the activity's id name one step: a re-run of it (a local activity run again after
    // its task's completion was refused, a retried attempt) has the same, a new step never does.
    const context = () => {
      const info = Context.current().info;
      return {
        workflowType: info.workflowType,
        workflowId: info.workflowExecution?.workflowId,
        runId: info.workflowExecution?.runId,
        activityId: info.activityId,
      };
    };
    wrapped[name] = async (...args: unknown[]) => {
      crashPoint(activityCrashPoint(name, 'before'), context);
      const result = await withCrashContext(context, () => (fn as (...a: unknown[]) => unknown)(...args));
      crashPoint(activityCrashPoint(name, 'after'), context);
      return result;
    };
  }
  return wrapped as unknown as T;
}
