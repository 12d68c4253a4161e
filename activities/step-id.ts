import { Context } from '@temporalio/activity';

/**
 * The step the running activity is: its workflow run and activity id. A re-run of the same step has
 * the same (a local activity run again after its task's completion was refused or timed out, a
 * retried attempt, a worker killed before the completion was recorded); a new step never does. The
 * workflow's clock is not: a local activity run again in a new task sees that task's time.
 */
export function currentStepId(): string {
  const { workflowExecution, activityId } = Context.current().info;
  if (!workflowExecution) throw new Error(`activity ${activityId} runs outside a workflow: it has no step`);
  return `${workflowExecution.runId}:${activityId}`;
}
