import { z } from 'zod';
import type { Prisma, PrismaClient } from '../../db/client';
import { raiseAlert, type AlertDeps } from '../monitoring/alerts';
import type { DepositEngine, DepositStart } from '../engine/pure/engine';
import { ApiError } from '../requests/errors';
import type { ResolutionRequest } from '../operators/pure/operator-resolution';

/**
 * A deposit whose first write, its row, the database refused for its data (a constraint, a value out
 * of range): there is no row to hold, so the hold is an operator alert, `deposit_unrecorded`, raised
 * by the activity whose write was refused, before it reports the failure. It carries what the
 * deposit's workflow was started with; the workflow waits for an operator. Retry writes the row again
 * (the write that succeeds closes the alert in its own transaction), fail closes the alert with who
 * and why and ends the run with nothing recorded. See docs/decisions/bank-accounts-and-payouts.md, "Provider callbacks are
 * hints, and a deposit refused at its first write".
 */
export const DEPOSIT_UNRECORDED = 'deposit_unrecorded';

const subjectOf = (depositId: string) => `deposit:${depositId}`;

/** What the alert's details hold (read back for a release and the console). */
const ZUnrecordedDetails = z.object({
  depositId: z.string(),
  workflowId: z.string(),
  sqlState: z.string(),
  start: z.custom<DepositStart>((v) => typeof v === 'object' && v !== null && typeof (v as DepositStart).depositId === 'string'),
  resolution: z.object({ action: z.string(), actor: z.string().optional(), reason: z.string().nullable().optional() }).optional(),
});
export type UnrecordedDetails = z.infer<typeof ZUnrecordedDetails>;

export interface UnrecordedDeposit extends UnrecordedDetails {
  alertId: string;
  open: boolean;
  since: Date;
}

/** Raises (or refreshes) the hold of a deposit whose row was refused with this SQLSTATE. */
export async function holdUnrecordedDeposit(deps: AlertDeps, start: DepositStart, workflowId: string, sqlState: string): Promise<void> {
  const details: UnrecordedDetails = { depositId: start.depositId, workflowId, sqlState, start };
  await raiseAlert(deps, { kind: DEPOSIT_UNRECORDED, severity: 'critical', subject: subjectOf(start.depositId), details });
}

/** The deposit's latest such hold, open or not; null when its row was never refused. */
export async function unrecordedDeposit(prisma: PrismaClient, depositId: string): Promise<UnrecordedDeposit | null> {
  const row = await prisma.operatorAlert.findFirst({
    where: { kind: DEPOSIT_UNRECORDED, subject: subjectOf(depositId) },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
  return row ? { ...ZUnrecordedDetails.parse(row.details), alertId: row.id, open: row.resolvedAt === null, since: row.createdAt } : null;
}

/** Every open hold, newest first (the console's list). */
export async function openUnrecordedDeposits(prisma: PrismaClient, limit: number): Promise<UnrecordedDeposit[]> {
  const rows = await prisma.operatorAlert.findMany({
    where: { kind: DEPOSIT_UNRECORDED, resolvedAt: null },
    orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
    take: limit,
  });
  return rows.map((row) => ({ ...ZUnrecordedDetails.parse(row.details), alertId: row.id, open: true, since: row.createdAt }));
}

/** Closes the deposit's open hold, noting how it ended; in the caller's transaction (the row's write). */
export async function closeUnrecordedHold(
  db: PrismaClient | Prisma.TransactionClient,
  depositId: string,
  resolution: UnrecordedDetails['resolution'],
): Promise<void> {
  await db.$executeRaw`
    UPDATE operator_alerts
    SET resolved_at = now(), updated_at = now(), details = details || jsonb_build_object('resolution', ${JSON.stringify(resolution)}::jsonb)
    WHERE kind = ${DEPOSIT_UNRECORDED} AND subject = ${subjectOf(depositId)} AND resolved_at IS NULL`;
}

/**
 * An operator's release of a deposit with no row: only while its hold is open; mark-settled is
 * refused (nothing is recorded to settle: retry records it first). Null when the deposit has no hold.
 */
export async function resolveUnrecordedDeposit(
  prisma: PrismaClient,
  engine: Pick<DepositEngine, 'resolveUnrecordedDeposit'>,
  depositId: string,
  request: ResolutionRequest,
): Promise<{ depositId: string; action: ResolutionRequest['action']; signalled: true } | null> {
  const held = await unrecordedDeposit(prisma, depositId);
  if (!held?.open) return null;
  if (request.action === 'mark-settled') {
    throw new ApiError('conflict', `deposit ${depositId} is not recorded (its row was refused): retry records it, fail gives it up`, {
      reasonCode: 'deposit_unrecorded',
    });
  }
  await engine.resolveUnrecordedDeposit({ workflowId: held.workflowId, start: held.start }, request);
  return { depositId, action: request.action, signalled: true };
}
