import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import { transferKey } from '../../chain/transfer-key';
import { verifyIncomingTransfer } from '../incoming-transfers';
import { recordIncident } from './payment-store';

/**
 * Transfers below the asset's minimum to a Payment's escrow ("dust"). Escrow addresses are public, so
 * anyone can send them in any number; they never wake a Payment's workflow. This sweep, run on a
 * schedule, follows them instead, a bounded batch at a time: once confirmed each is held for recovery
 * (an incident, posted as escrow holdings: the books still equal the chain); once dropped, nothing.
 */
export async function sweepDust(deps: { prisma: PrismaClient; chains: ChainRegistry }, opts: { limit?: number } = {}) {
  const rows = await deps.prisma.paymentTransfer.findMany({
    where: { status: 'dust' },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take: opts.limit ?? 200,
    include: { payment: true },
  });
  const summary = { checked: rows.length, held: 0, dropped: 0, pending: 0 };
  for (const row of rows) {
    const p = row.payment;
    const outcome = await verifyIncomingTransfer(deps.chains.get(row.chainId), {
      txHash: row.txHash,
      ordinal: row.ordinal,
      token: p.tokenAddress,
      to: p.escrowAddress ?? '',
      confirmations: deps.chains.network(row.chainId).confirmations,
    });
    if (outcome === 'pending') {
      summary.pending += 1;
      continue;
    }
    await deps.prisma.$transaction(async (tx) => {
      // Conditional: an overlapping sweep that got here first wins, and this one writes nothing.
      const { count } = await tx.paymentTransfer.updateMany({
        where: { id: row.id, status: 'dust' },
        data: { status: outcome === 'confirmed' ? 'dust_confirmed' : 'dust_dropped', role: 'dust' },
      });
      if (count !== 1 || outcome !== 'confirmed') return;
      const key = transferKey({ chainId: row.chainId, txHash: row.txHash, to: p.escrowAddress ?? '', ordinal: row.ordinal });
      await recordIncident(tx, p, { kind: 'dust', amountAtomic: row.amountAtomic.toFixed(), transferKey: key }, key);
    });
    if (outcome === 'confirmed') summary.held += 1;
    else summary.dropped += 1;
  }
  return summary;
}
