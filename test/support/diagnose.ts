import type { Harness } from './harness';

/** One workflow as a failing test reports it: its status, history length and pending activities. */
export async function describeWorkflow(h: Pick<Harness, 'env'>, workflowId: string): Promise<string> {
  const d = await h.env.client.workflow
    .getHandle(workflowId)
    .describe()
    .catch((err: unknown) => err as Error);
  if (d instanceof Error) return `${workflowId}: not described (${d.message})`;
  const pending = (d.raw.pendingActivities ?? []).map((a) =>
    `${a.activityType?.name}#${a.attempt} ${a.state} ${a.lastFailure?.message ?? ''}`.trim(),
  );
  return `${workflowId} ${d.status.name} (${d.historyLength} events)${pending.length ? `: ${pending.join('; ')}` : ''}`;
}

/** Every open workflow on the test server (one page: a test process never has a thousand). */
export async function openWorkflows(h: Pick<Harness, 'env'>) {
  const open = await h.env.client.workflowService.listOpenWorkflowExecutions({
    namespace: h.env.namespace ?? 'default',
    maximumPageSize: 1000,
  });
  return open.executions ?? [];
}

/**
 * Every open workflow on the test server with a workflow task or activity pending: what holds the
 * time-skipping clock when a wait for a timer does not return.
 */
export async function clockHolders(h: Pick<Harness, 'env'>): Promise<string[]> {
  const svc = h.env.client.workflowService;
  const namespace = h.env.namespace ?? 'default';
  const held: string[] = [];
  for (const e of await openWorkflows(h)) {
    const d = await svc.describeWorkflowExecution({ namespace, execution: e.execution! }).catch(() => null);
    if (!d) continue;
    const activities = (d.pendingActivities ?? []).map((a) => `${a.activityType?.name ?? '?'}#${a.attempt ?? 0}`);
    const task = d.pendingWorkflowTask ? ['a workflow task'] : [];
    if (activities.length + task.length > 0)
      held.push(`${e.execution?.workflowId} on ${e.taskQueue}: ${[...task, ...activities].join(', ')}`);
  }
  return held;
}
