import type { Client } from '@temporalio/client';
import type { Prisma, PrismaClient } from '../../db/client';
import { notFound } from '../../http/errors';
import { afterPosition, pageOf, type CursorCodec } from '../../http/pagination';
import type { AuthenticatedApp } from '../apps';
import { depositWorkflowId, resolveDepositSignal, type DepositResolutionRequest } from '../../../workflows/deposit-api';
import type { TListDepositsQuery } from './deposit.schemas';
import { requireAccount } from './deposit-addresses';
import { toDepositView } from './deposit-view';

/** GET /v2/accounts/{accountId}/deposits: newest first, optionally one status; the cursor is bound to both. */
export async function listDeposits(
  prisma: PrismaClient,
  app: AuthenticatedApp,
  accountId: string,
  query: TListDepositsQuery,
  cursors: CursorCodec,
) {
  await requireAccount(prisma, app.id, accountId);
  const scope = `deposits:${app.id}:${accountId}:${query.status ?? ''}`;
  const position = query.cursor ? cursors.decode(scope, query.cursor) : undefined;
  const filters: Prisma.DepositWhereInput = { appId: app.id, accountId, ...(query.status ? { status: query.status } : {}) };
  const rows = await prisma.deposit.findMany({
    where: { AND: [filters, afterPosition(position)] },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: query.limit + 1,
  });
  const page = pageOf(rows, query.limit, cursors, scope);
  return { accountId, deposits: page.items.map(toDepositView), nextCursor: page.nextCursor };
}

export async function getDeposit(prisma: PrismaClient, app: AuthenticatedApp, accountId: string, depositId: string) {
  await requireAccount(prisma, app.id, accountId);
  const row = await prisma.deposit.findFirst({ where: { id: depositId, accountId, appId: app.id } });
  if (!row) throw notFound('Deposit');
  return { deposit: toDepositView(row) };
}

/**
 * Operator release of a requires_intervention hold: a signal to the deposit's workflow, which records
 * who and why (deposit_resolutions) and applies it. Refused here unless the deposit is held.
 */
export async function resolveDeposit(prisma: PrismaClient, temporal: Client, depositId: string, request: DepositResolutionRequest) {
  const deposit = await prisma.deposit.findUnique({ where: { id: depositId } });
  if (!deposit) throw new Error(`no deposit ${depositId}`);
  if (deposit.status !== 'requires_intervention') {
    throw new Error(`deposit ${depositId} is not held (status ${deposit.status})`);
  }
  await temporal.workflow.getHandle(depositWorkflowId(deposit.chainId, deposit.txHash, deposit.logIndex)).signal(resolveDepositSignal, request);
  return { depositId, action: request.action, signalled: true };
}
