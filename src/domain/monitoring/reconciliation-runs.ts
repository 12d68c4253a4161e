import type { PrismaClient } from '../../db/client';
import type { ReconciliationRun } from '../../generated/prisma/client';
import { LEDGER_DIFFERENCE } from '../ledger/reconcile';
import { PAYMENT_WORKFLOW_MISSING } from '../payments/payment-workflows';
import { SETTLEMENT_DROPPED } from '../payments/payment-redelivery';

/**
 * The last pass of each scheduled reconciliation, for operators (the console): when it ran, and
 * whether it was clean. One row per reconciliation in reconciliation_runs, written by the pass's own
 * activities (its workflow code is unchanged): its first activity notes the start, its last one the
 * outcome. Each write is keyed by the workflow run, so a retried activity writes the same row again.
 */
export const RECONCILIATIONS = ['payment-reconciliation', 'ledger-reconciliation', 'deposit-reconciliation'] as const;
export type ReconciliationName = (typeof RECONCILIATIONS)[number];

/** The alert kinds a reconciliation raises and resolves: its open ones are its discrepancies. */
export const RECONCILIATION_ALERT_KINDS: Record<ReconciliationName, readonly string[]> = {
  'payment-reconciliation': [PAYMENT_WORKFLOW_MISSING, SETTLEMENT_DROPPED],
  'ledger-reconciliation': [LEDGER_DIFFERENCE],
  'deposit-reconciliation': [],
};

/** The workflow run a pass is. */
export interface PassRef {
  workflowId: string;
  runId: string;
}

export interface PassOutcome {
  /** 0: the pass was clean. */
  discrepancies: number;
  counts: Record<string, number>;
}

/** A pass began: noted once per run (a retried first activity doesn't move its start). */
export async function passBegan(prisma: PrismaClient, name: ReconciliationName, pass: PassRef): Promise<void> {
  await prisma.$executeRaw`
    INSERT INTO reconciliation_runs (name, current_run_id, current_started_at, current_findings, current_last_item)
    VALUES (${name}, ${pass.runId}, now(), '[]'::jsonb, NULL)
    ON CONFLICT (name) DO UPDATE SET current_run_id = EXCLUDED.current_run_id, current_started_at = EXCLUDED.current_started_at,
      current_findings = '[]'::jsonb, current_last_item = NULL, updated_at = now()
    WHERE reconciliation_runs.current_run_id IS DISTINCT FROM EXCLUDED.current_run_id`;
}

/** Items the pass in progress found, kept as a set until it finishes. */
export async function passFound(prisma: PrismaClient, name: ReconciliationName, pass: PassRef, itemIds: string[]): Promise<void> {
  if (itemIds.length === 0) return;
  await prisma.$executeRaw`
    UPDATE reconciliation_runs
    SET current_findings = (SELECT jsonb_agg(DISTINCT v) FROM jsonb_array_elements_text(current_findings || to_jsonb(${itemIds}::text[])) AS v), updated_at = now()
    WHERE name = ${name} AND current_run_id = ${pass.runId}`;
}

/** For a pass with no closing activity: the item whose activity ends it. */
export async function passEndsAfter(prisma: PrismaClient, name: ReconciliationName, pass: PassRef, itemId: string): Promise<void> {
  await prisma.$executeRaw`
    UPDATE reconciliation_runs SET current_last_item = ${itemId}, updated_at = now()
    WHERE name = ${name} AND current_run_id = ${pass.runId}`;
}

/** Whether `itemId` is the one that ends this pass (see passEndsAfter). */
export async function endsPass(prisma: PrismaClient, name: ReconciliationName, pass: PassRef, itemId: string): Promise<boolean> {
  const row = await prisma.reconciliationRun.findUnique({ where: { name }, select: { currentRunId: true, currentLastItem: true } });
  return row?.currentRunId === pass.runId && row.currentLastItem === itemId;
}

/** What the pass in progress found so far (passFound). */
export async function passFindings(prisma: PrismaClient, name: ReconciliationName, pass: PassRef): Promise<string[]> {
  const row = await prisma.reconciliationRun.findUnique({ where: { name }, select: { currentRunId: true, currentFindings: true } });
  return row?.currentRunId === pass.runId && Array.isArray(row.currentFindings) ? (row.currentFindings as string[]) : [];
}

/**
 * A pass finished: it becomes the last run. Written again by a retried activity (the same run, the
 * outcome that attempt saw). Its start is the one passBegan noted for this run, if any.
 */
export async function passFinished(prisma: PrismaClient, name: ReconciliationName, pass: PassRef, outcome: PassOutcome): Promise<void> {
  const result = outcome.discrepancies === 0 ? 'clean' : 'discrepancies';
  const counts = JSON.stringify(outcome.counts);
  await prisma.$executeRaw`
    INSERT INTO reconciliation_runs (name, workflow_id, run_id, started_at, finished_at, outcome, discrepancies, counts)
    VALUES (${name}, ${pass.workflowId}, ${pass.runId}, NULL, now(), ${result}, ${outcome.discrepancies}, ${counts}::jsonb)
    ON CONFLICT (name) DO UPDATE SET
      workflow_id = EXCLUDED.workflow_id, run_id = EXCLUDED.run_id,
      started_at = CASE WHEN reconciliation_runs.current_run_id = EXCLUDED.run_id THEN reconciliation_runs.current_started_at
                        WHEN reconciliation_runs.run_id = EXCLUDED.run_id THEN reconciliation_runs.started_at END,
      finished_at = EXCLUDED.finished_at, outcome = EXCLUDED.outcome, discrepancies = EXCLUDED.discrepancies, counts = EXCLUDED.counts,
      current_run_id = CASE WHEN reconciliation_runs.current_run_id = EXCLUDED.run_id THEN NULL ELSE reconciliation_runs.current_run_id END,
      current_started_at = CASE WHEN reconciliation_runs.current_run_id = EXCLUDED.run_id THEN NULL ELSE reconciliation_runs.current_started_at END,
      updated_at = now()`;
}

/** Open alerts of the kinds a reconciliation owns, by kind (every kind listed, 0 when none). */
export async function openAlertsOf(prisma: PrismaClient, name: ReconciliationName): Promise<Record<string, number>> {
  const kinds = RECONCILIATION_ALERT_KINDS[name];
  const rows = await prisma.operatorAlert.groupBy({
    by: ['kind'],
    where: { kind: { in: [...kinds] }, resolvedAt: null },
    _count: { _all: true },
  });
  return Object.fromEntries(kinds.map((k) => [k, rows.find((r) => r.kind === k)?._count._all ?? 0]));
}

export interface ReconciliationRunView {
  name: ReconciliationName;
  /** The alert kinds it raises, with how many are open now. */
  openAlerts: Record<string, number>;
  lastRun: {
    workflowId: string;
    startedAt: string | null;
    finishedAt: string;
    outcome: 'clean' | 'discrepancies';
    discrepancies: number;
    counts: Record<string, number>;
  } | null;
  /** A pass that began and has not finished (running, or failed before its end). */
  current: { startedAt: string } | null;
}

function toView(name: ReconciliationName, row: ReconciliationRun | undefined, openAlerts: Record<string, number>): ReconciliationRunView {
  return {
    name,
    openAlerts,
    lastRun:
      row?.finishedAt && row.workflowId
        ? {
            workflowId: row.workflowId,
            startedAt: row.startedAt?.toISOString() ?? null,
            finishedAt: row.finishedAt.toISOString(),
            outcome: row.outcome as 'clean' | 'discrepancies',
            discrepancies: row.discrepancies ?? 0,
            counts: (row.counts ?? {}) as Record<string, number>,
          }
        : null,
    current: row?.currentRunId && row.currentStartedAt ? { startedAt: row.currentStartedAt.toISOString() } : null,
  };
}

/** Every reconciliation, in RECONCILIATIONS order, run or not. */
export async function listReconciliationRuns(prisma: PrismaClient): Promise<ReconciliationRunView[]> {
  const rows = await prisma.reconciliationRun.findMany({ where: { name: { in: [...RECONCILIATIONS] } } });
  const views: ReconciliationRunView[] = [];
  for (const name of RECONCILIATIONS)
    views.push(
      toView(
        name,
        rows.find((r) => r.name === name),
        await openAlertsOf(prisma, name),
      ),
    );
  return views;
}
