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

/**
 * What is still running on the test server, with each workflow's pending activities: the first thing
 * to look at when a time-skipping wait does not return (a running activity holds time still).
 */
export async function runningWorkflows(h: Harness): Promise<string[]> {
  const ids = [
    ...(await h.db.prisma.payment.findMany({ select: { id: true } })).map((p) => p.id),
    ...(await h.db.prisma.deposit.findMany({ select: { workflowId: true } })).map((d) => d.workflowId),
    `chain-scanner:${h.chainId}`,
    'webhook-dispatcher',
  ];
  const out: string[] = [];
  for (const id of ids) {
    const d = await h.env.client.workflow
      .getHandle(id)
      .describe()
      .catch(() => null);
    if (!d || d.status.name !== 'RUNNING') continue;
    out.push(await describeWorkflow(h, id));
  }
  return out;
}

/**
 * Every open workflow on the test server with a workflow task or activity pending: what holds the
 * time-skipping clock when a wait for a timer does not return.
 */
export async function clockHolders(h: Pick<Harness, 'env'>): Promise<string[]> {
  const svc = h.env.client.workflowService;
  const namespace = h.env.namespace ?? 'default';
  const open = await svc.listOpenWorkflowExecutions({ namespace, maximumPageSize: 1000 });
  const held: string[] = [];
  for (const e of open.executions ?? []) {
    const d = await svc.describeWorkflowExecution({ namespace, execution: e.execution! }).catch(() => null);
    if (!d) continue;
    const activities = (d.pendingActivities ?? []).map((a) => `${a.activityType?.name ?? '?'}#${a.attempt ?? 0}`);
    const task = d.pendingWorkflowTask ? ['a workflow task'] : [];
    if (activities.length + task.length > 0)
      held.push(`${e.execution?.workflowId} on ${e.taskQueue}: ${[...task, ...activities].join(', ')}`);
  }
  return held;
}
