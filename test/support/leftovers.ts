import type { Harness } from './harness';

/**
 * The Payment and deposit workflows still running when a suite process ends: each one wakes on every
 * later time skip, so a test that leaves many slows every test after it. Printed, not asserted.
 */
export async function reportLeftovers(h: Harness): Promise<void> {
  const payments = await h.db.prisma.payment.findMany({ select: { id: true } });
  const deposits = await h.db.prisma.deposit.findMany({ select: { workflowId: true } });
  const ids = [...payments.map((p) => h.engine.paymentWorkflowId(p.id)), ...deposits.map((d) => d.workflowId)];
  const running: string[] = [];
  for (const id of ids) {
    const status = await h.engine.describeWorkflow(id).then(
      (d) => d.status,
      () => 'NOT_FOUND',
    );
    if (status === 'RUNNING') running.push(id);
  }
  console.log(`# workflows still running at the end: ${running.length} of ${ids.length} Payments and deposits`);
  if (process.env.TEST_LEFTOVERS === '1') for (const id of running) console.log(`#   ${id}`);
}
