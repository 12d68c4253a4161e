import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { Logger } from '../../logger';
import { raiseAlert, resolveAlerts, type AlertDeps } from '../monitoring/alerts';
import type { PaymentEngine } from '../engine/pure/engine';
import { TERMINAL, type PaymentStatus } from './pure/payment-machine';

/**
 * The orphan Payment reconciler: every Payment that is not terminal has a running workflow.
 *
 * create-payment commits the row, then starts the workflow; when Temporal is briefly down the commit
 * can succeed and the start fail, and only a partner's retry with the same Idempotency-Key would
 * finish it. This pass finishes it instead, for Payments older than a grace period (so it doesn't race
 * a create still in progress):
 * - a Payment its workflow never moved (statusVersion 1, requires_payment_method) gets its workflow
 *   started, resumed from the row (idempotent: a running one answers 'exists'); it takes the
 *   transfers the scanner recorded meanwhile that no run took;
 * - a Payment that has moved on but whose workflow does not run can't be restarted safely (a new run
 *   would start from the beginning while the row and the ledger have moved on): it raises a critical
 *   `payment_workflow_missing` alert, resolved once its workflow runs or the Payment is terminal.
 */
export interface PaymentWorkflowDeps {
  prisma: PrismaClient;
  chains: Pick<ChainRegistry, 'network'>;
  engine: Pick<PaymentEngine, 'startPayment' | 'paymentWorkflowState'>;
  logger: Pick<Logger, 'error' | 'warn' | 'info'>;
}

export interface PaymentWorkflowBatch {
  /** Payments created before this were looked at; fixed by the first batch of a pass. */
  cutoff: string;
  checked: number;
  /** Orphans whose workflow was started by this batch. */
  started: string[];
  /** Payments that moved on and whose workflow does not run (alerted). */
  missing: string[];
  /** Pass as afterId for the next batch; null after the last. */
  next: string | null;
}

export const PAYMENT_WORKFLOW_MISSING = 'payment_workflow_missing';
const subjectOf = (paymentId: string) => `payment:${paymentId}`;

export async function reconcilePaymentWorkflows(
  deps: PaymentWorkflowDeps,
  input: { graceSeconds: number; cutoff?: string; afterId?: string | null; limit: number },
): Promise<PaymentWorkflowBatch> {
  const alerts: AlertDeps = { prisma: deps.prisma, logger: deps.logger };
  const cutoff = input.cutoff ? new Date(input.cutoff) : new Date(Date.now() - input.graceSeconds * 1000);
  const afterId = input.afterId ?? '';
  // Literal statuses: they match the partial index payments_not_terminal_id_idx.
  const ids = await deps.prisma.$queryRaw<Array<{ id: string }>>`
    SELECT id FROM payments
    WHERE status NOT IN ('succeeded', 'failed', 'cancelled', 'expired') AND id > ${afterId} AND created_at < ${cutoff}
    ORDER BY id LIMIT ${input.limit}`;
  const rows = await deps.prisma.payment.findMany({ where: { id: { in: ids.map((r) => r.id) } }, orderBy: { id: 'asc' } });

  const started: string[] = [];
  const missing: string[] = [];
  const healthy: string[] = [];
  // The rows were read before each workflow is described: one that finished meanwhile is no orphan.
  const endedMeanwhile = async (id: string) => {
    const now = await deps.prisma.payment.findUnique({ where: { id }, select: { status: true } });
    return !now || TERMINAL.has(now.status as PaymentStatus);
  };
  for (const row of rows) {
    if (
      row.statusVersion === 1 &&
      row.status === 'requires_payment_method' &&
      (await deps.engine.paymentWorkflowState(row.id)) === 'not_found'
    ) {
      // Resumed from the row: transfers the scanner recorded meanwhile, which no run took, are taken.
      const outcome = await deps.engine.startPayment(row, deps.chains.network(row.chainId).confirmations, { resume: true });
      if (outcome === 'started') {
        started.push(row.id);
        deps.logger.warn({ paymentId: row.id, createdAt: row.createdAt.toISOString() }, 'started the workflow of an orphaned Payment');
      }
      healthy.push(row.id);
      continue;
    }
    const state = await deps.engine.paymentWorkflowState(row.id);
    if (state === 'running' || (await endedMeanwhile(row.id))) {
      healthy.push(row.id);
      continue;
    }
    missing.push(row.id);
    await raiseAlert(alerts, {
      kind: PAYMENT_WORKFLOW_MISSING,
      severity: 'critical',
      subject: subjectOf(row.id),
      details: {
        paymentId: row.id,
        appId: row.appId,
        status: row.status,
        statusVersion: row.statusVersion,
        operationalState: row.operationalState,
        workflow: state,
      },
    });
  }
  await resolveAlerts(alerts, PAYMENT_WORKFLOW_MISSING, healthy.map(subjectOf));
  if (!input.afterId) await resolveAlertsOfTerminalPayments(deps.prisma, alerts);
  return {
    cutoff: cutoff.toISOString(),
    checked: rows.length,
    started,
    missing,
    next: ids.length === input.limit ? ids[ids.length - 1]!.id : null,
  };
}

/** A Payment that reached a terminal status (e.g. an operator repaired it) needs its workflow no more. */
async function resolveAlertsOfTerminalPayments(prisma: PrismaClient, alerts: AlertDeps): Promise<void> {
  const open = await prisma.operatorAlert.findMany({
    where: { kind: PAYMENT_WORKFLOW_MISSING, resolvedAt: null },
    select: { subject: true },
  });
  if (open.length === 0) return;
  const ids = open.map((o) => o.subject.replace(/^payment:/, ''));
  const terminal = await prisma.payment.findMany({
    where: { id: { in: ids }, status: { in: [...TERMINAL] } },
    select: { id: true },
  });
  await resolveAlerts(
    alerts,
    PAYMENT_WORKFLOW_MISSING,
    terminal.map((p) => subjectOf(p.id)),
  );
}
