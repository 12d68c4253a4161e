import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { temporal } from '@temporalio/proto';
import { until } from './until';

/**
 * The time-skipping server's clock across the files of a shard. The server skips time only while no
 * one holds its lock, and a run that ends with a workflow task or an activity out keeps that lock for
 * ever (terminated mid-task; the task's completion is then refused): every later wait for a timer in
 * the shard passes in real time, and a later file stalls and takes the blame. So at the end of each
 * file the runs that ended during it are read, and one that ended with work out fails the file, named.
 * (Probing the clock instead, by asking it to skip, walks every live run through its timers.)
 */
let shared: TestWorkflowEnvironment | undefined;
const seenClosed = new Set<string>();
const givenBack = new Set<string>();

export function noteEngineClock(env: TestWorkflowEnvironment): void {
  shared = env;
}

/** At the end of a file that used the harness: no run it ended kept a lock on the shared clock. */
export async function checkEngineClock(file: string): Promise<void> {
  if (!shared) return;
  const locked = await runsEndedWithWorkOut(shared);
  if (locked.length > 0)
    throw new Error(
      `${file} ended runs with work out, and the time-skipping server keeps their clock locks for ever (end a run with terminateAtRest, test/support/engine-clock.ts):\n  ${locked.join('\n  ')}`,
    );
}

/** The runs closed since the last call whose histories end with work out (and whose locks no one gave back). */
export async function runsEndedWithWorkOut(env: TestWorkflowEnvironment): Promise<string[]> {
  const namespace = env.namespace ?? 'default';
  const closed = await env.client.workflowService.listClosedWorkflowExecutions({ namespace });
  const found: string[] = [];
  for (const info of closed.executions ?? []) {
    const { workflowId, runId } = info.execution!;
    if (seenClosed.has(runId!)) continue;
    seenClosed.add(runId!);
    if (givenBack.has(runId!)) continue;
    const out = workOutAtEnd((await env.client.workflow.getHandle(workflowId!, runId!).fetchHistory()).events ?? []);
    if (out > 0) found.push(`${info.type?.name} ${workflowId} run ${runId}: ${out} task(s) out when it ended ${info.status}`);
  }
  return found;
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/**
 * What a run had out when its history ended: an open workflow task counts one, and so does each
 * activity scheduled and never closed. Each held a lock on the time-skipping clock that the server
 * keeps once the run is over. (An activity waiting to retry after a failure holds none; a history does
 * not show one, and a run at rest has none.)
 */
export function workOutAtEnd(events: readonly HistoryEvent[]): number {
  let taskOpen = false;
  const activities = new Set<string>();
  for (const e of events) {
    if (e.workflowTaskScheduledEventAttributes) taskOpen = true;
    if (e.workflowTaskCompletedEventAttributes || e.workflowTaskFailedEventAttributes || e.workflowTaskTimedOutEventAttributes)
      taskOpen = false;
    if (e.activityTaskScheduledEventAttributes) activities.add(String(e.eventId));
    const closed =
      e.activityTaskCompletedEventAttributes ??
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes ??
      e.activityTaskCanceledEventAttributes;
    if (closed) activities.delete(String(closed.scheduledEventId));
  }
  return (taskOpen ? 1 : 0) + activities.size;
}

/** Waits until the run has nothing out: no workflow task open, no activity pending, no new event between two reads. */
export async function untilAtRest(env: TestWorkflowEnvironment, workflowId: string): Promise<number> {
  const handle = env.client.workflow.getHandle(workflowId);
  let last = -1;
  return until(async (saw) => {
    const events = (await handle.fetchHistory()).events ?? [];
    const pending = (await handle.describe()).raw.pendingActivities?.length ?? 0;
    const out = workOutAtEnd(events);
    saw({ events: events.length, workOut: out, pendingActivities: pending });
    const resting = out === 0 && pending === 0 && events.length === last;
    last = events.length;
    return resting ? events.length : undefined;
  }, `${workflowId} resting with nothing out`);
}

/**
 * Ends a run of the shared worker for a test that needs it gone, leaving the clock as it was: once the
 * run rests, terminates it, and gives back the lock of anything a timer put out in between (at rest,
 * no activity waits on a retry, so each open one in the final history holds a lock).
 */
export async function terminateAtRest(env: TestWorkflowEnvironment, workflowId: string, reason: string): Promise<void> {
  await untilAtRest(env, workflowId);
  const { runId } = await env.client.workflow.getHandle(workflowId).describe();
  const run = env.client.workflow.getHandle(workflowId, runId);
  try {
    await run.terminate(reason);
  } catch (err) {
    // It ended on its own meanwhile (a run at rest may still be one task from its end): nothing is out.
    if (err instanceof Error && err.name === 'WorkflowNotFoundError') return;
    throw err;
  }
  const leaked = workOutAtEnd((await run.fetchHistory()).events ?? []);
  for (let i = 0; i < leaked; i += 1) await env.connection.testService!.unlockTimeSkipping({});
  givenBack.add(runId);
}
