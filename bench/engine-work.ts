import type { temporal } from '@temporalio/proto';

/** One run's history, as `WorkflowHandle.fetchHistory()` answers it. */
export type History = temporal.api.history.v1.IHistory;

/** The marker the SDK's core records for each local activity (LOCAL_ACTIVITY_MARKER_NAME in sdk-core's protos). */
export const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/**
 * What the engine did for one workflow run, read from its history. Events are told apart by their
 * attributes (one per event), so a decoded history and its JSON read alike.
 * - workflowTasks: tasks completed. A task that failed or timed out is not in it (the retry that
 *   completes is); such tasks are counted apart, in the keys below, only when there are any.
 * - activityTasks: activities scheduled. The server retries an attempt without a new event, so
 *   retries are not in it.
 * - localActivities: local-activity markers (each ran inside a workflow task, no task of its own).
 */
export interface EngineWork {
  workflowTasks: number;
  activityTasks: number;
  localActivities: number;
  historyEvents: number;
  failedWorkflowTasks?: number;
  timedOutWorkflowTasks?: number;
}

/** One flow's work: every run it created, summed, and the workflow type of each (in the order given). */
export interface FlowEngineWork extends EngineWork {
  workflowTypes: string[];
}

export function engineWork(history: History): EngineWork {
  const events = history.events ?? [];
  const count = (is: (e: temporal.api.history.v1.IHistoryEvent) => unknown) => events.filter((e) => is(e)).length;
  const failed = count((e) => e.workflowTaskFailedEventAttributes);
  const timedOut = count((e) => e.workflowTaskTimedOutEventAttributes);
  return {
    workflowTasks: count((e) => e.workflowTaskCompletedEventAttributes),
    activityTasks: count((e) => e.activityTaskScheduledEventAttributes),
    localActivities: count((e) => e.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER),
    historyEvents: events.length,
    ...(failed ? { failedWorkflowTasks: failed } : {}),
    ...(timedOut ? { timedOutWorkflowTasks: timedOut } : {}),
  };
}

export function workflowTypeOf(history: History): string {
  return history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? 'unknown';
}

export function flowEngineWork(histories: History[]): FlowEngineWork {
  const sum: FlowEngineWork = { workflowTypes: [], workflowTasks: 0, activityTasks: 0, localActivities: 0, historyEvents: 0 };
  for (const history of histories) {
    sum.workflowTypes.push(workflowTypeOf(history));
    for (const [key, n] of Object.entries(engineWork(history)) as Array<[keyof EngineWork, number]>) sum[key] = (sum[key] ?? 0) + n;
  }
  return sum;
}

/**
 * Whether the run is over for good: completed, failed, timed out, cancelled or terminated. A run that
 * continued as new is not: its history is only part of the workflow's.
 */
export function runEnded(history: History): boolean {
  const last = history.events?.at(-1);
  return Boolean(
    last &&
    (last.workflowExecutionCompletedEventAttributes ??
      last.workflowExecutionFailedEventAttributes ??
      last.workflowExecutionTimedOutEventAttributes ??
      last.workflowExecutionCanceledEventAttributes ??
      last.workflowExecutionTerminatedEventAttributes),
  );
}
