import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import { verifyIncomingTransfer } from '../chain/incoming-transfers';
import { onSourceInvalidated } from './pure/deposit-machine';
import { toPersistedTransition } from './pure/deposit-serde';
import { persistDepositTransition } from './deposit-store';
import { depositStateOf } from './deposit-view';

/** Settled deposits to re-verify, in id order, one page after `afterId`. */
export async function depositsToReconcile(
  prisma: PrismaClient,
  input: { settledSince: string; afterId?: string; limit: number },
): Promise<string[]> {
  const rows = await prisma.deposit.findMany({
    where: { status: 'settled', settledAt: { gte: new Date(input.settledSince) }, ...(input.afterId ? { id: { gt: input.afterId } } : {}) },
    orderBy: { id: 'asc' },
    take: input.limit,
    select: { id: true },
  });
  return rows.map((r) => r.id);
}

/**
 * Re-verifies one settled deposit's source transfer at the confirmation depth. Still there: valid.
 * Not deep enough right now (e.g. re-included after a reorg): pending, looked at again next pass.
 * Gone (not canonical, unknown, reverted): the deposit is reversed, with deposit.reversed and the
 * reversing posting in the same transaction. No on-chain clawback.
 */
export async function reconcileDeposit(
  deps: { prisma: PrismaClient; chains: ChainRegistry },
  depositId: string,
  at: string,
): Promise<'valid' | 'pending' | 'reversed' | 'skipped'> {
  const d = await deps.prisma.deposit.findUniqueOrThrow({ where: { id: depositId }, include: { depositAddress: true } });
  if (d.status !== 'settled' || !d.depositAddress.address) return 'skipped';
  const outcome = await verifyIncomingTransfer(deps.chains.get(d.chainId), {
    txHash: d.txHash,
    ordinal: d.ordinal,
    token: d.tokenAddress,
    to: d.depositAddress.address,
    confirmations: deps.chains.network(d.chainId).confirmations,
  });
  if (outcome === 'confirmed') return 'valid';
  if (outcome === 'pending') return 'pending';
  const t = onSourceInvalidated(depositStateOf(d), at);
  if (!t) return 'skipped';
  await persistDepositTransition(deps.prisma, d.id, toPersistedTransition(t, at));
  return 'reversed';
}
