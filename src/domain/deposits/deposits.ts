import type { Prisma, PrismaClient } from '../../db/client';
import { ApiError, notFound } from '../requests/errors';
import { afterPosition, pageOf, type CursorCodec } from '../requests/pagination';
import type { AuthenticatedApp } from '../apps/apps';
import type { DepositEngine } from '../engine/pure/engine';
import { isHeld, type ResolutionRequest } from '../operators/pure/operator-resolution';
import type { ChainRegistry } from '../../chain/registry';
import { requirePayout } from '../settlement/manual-payout';
import { expectedDepositPayout } from './deposit-settlement';
import type { TListDepositsQuery } from './deposit.schemas';
import { requireAccount } from './deposit-addresses';
import { toDepositView } from './deposit-view';
import { finalitiesOf, finalityOfOne, type FinalityDeps } from '../chain/finality';
import { resolveUnrecordedDeposit } from './deposit-unrecorded';

/** GET /v2/accounts/{accountId}/deposits: newest first, optionally one status; the cursor is bound to both. */
export async function listDeposits(
  deps: FinalityDeps,
  app: AuthenticatedApp,
  accountId: string,
  query: TListDepositsQuery,
  cursors: CursorCodec,
) {
  const { prisma } = deps;
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
  // The page's finality in one query, whatever its size.
  const finality = await finalitiesOf(deps, { kind: 'deposit', ids: page.items.map((d) => d.id) }, new Date());
  return { accountId, deposits: page.items.map((d) => toDepositView(d, finality.get(d.id)!)), nextCursor: page.nextCursor };
}

export async function getDeposit(deps: FinalityDeps, app: AuthenticatedApp, accountId: string, depositId: string) {
  const { prisma } = deps;
  await requireAccount(prisma, app.id, accountId);
  const row = await prisma.deposit.findFirst({ where: { id: depositId, accountId, appId: app.id } });
  if (!row) throw notFound('Deposit');
  return { deposit: toDepositView(row, await finalityOfOne(deps, { kind: 'deposit', id: row.id }, new Date())) };
}

/**
 * Operator release of a requires_intervention hold: the deposit's workflow records who and why
 * (deposit_resolutions) and applies it. Refused here unless the deposit is held; a hand-made payout
 * (mark-settled) is checked against the chain first. A deposit whose row was refused is held by its
 * alert (deposit-unrecorded.ts).
 */
export async function resolveDeposit(
  deps: { prisma: PrismaClient; chains: ChainRegistry },
  engine: Pick<DepositEngine, 'resolveDeposit' | 'resolveUnrecordedDeposit'>,
  depositId: string,
  request: ResolutionRequest,
) {
  const deposit = await deps.prisma.deposit.findUnique({ where: { id: depositId }, include: { depositAddress: true } });
  if (!deposit) {
    const unrecorded = await resolveUnrecordedDeposit(deps.prisma, engine, depositId, request);
    if (unrecorded) return unrecorded;
    throw notFound('Deposit');
  }
  if (!isHeld({ kind: 'deposit', status: deposit.status })) {
    throw new ApiError('conflict', `deposit ${depositId} is not held (status ${deposit.status})`);
  }
  if (request.action === 'mark-settled') {
    const expected = expectedDepositPayout(deposit, deps.chains.network(deposit.chainId).confirmations);
    await requirePayout(deps, { type: 'deposit', id: depositId }, request.txHash ?? '', expected);
  }
  await engine.resolveDeposit({ workflowId: deposit.workflowId }, request);
  return { depositId, action: request.action, signalled: true };
}
