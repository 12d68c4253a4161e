import type { Harness } from './harness';

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
    const d = await h.env.client.workflow.getHandle(id).describe().catch(() => null);
    if (!d || d.status.name !== 'RUNNING') continue;
    const pending = (d.raw.pendingActivities ?? []).map((a) => `${a.activityType?.name}#${a.attempt} ${a.state} ${a.lastFailure?.message ?? ''}`.trim());
    out.push(`${id} (${d.historyLength} events)${pending.length ? `: ${pending.join('; ')}` : ''}`);
  }
  return out;
}
