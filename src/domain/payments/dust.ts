import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import { transferKey } from '../../chain/transfer-key';
import { verifyIncomingTransfer } from '../chain/incoming-transfers';
import { recordIncident } from './payment-store';

/**
 * Transfers to a Payment's escrow that can't be its funding, and never wake its workflow: "dust",
 * below the asset's minimum (escrow addresses are public, so anyone can send them in any number), and
 * "foreign" ones, of another asset or on another chain than the Payment's (the address is the same on
 * every EVM chain). This sweep, run on a schedule, follows them instead, a bounded batch at a time:
 * once confirmed on its own chain each is held for recovery (an incident, posted as escrow holdings in
 * the transfer's own chain and asset: the books still equal the chain); once dropped, nothing.
 */
export async function sweepDust(deps: { prisma: PrismaClient; chains: ChainRegistry }, opts: { limit?: number } = {}) {
  const rows = await deps.prisma.paymentTransfer.findMany({
    where: { status: { in: ['dust', 'foreign'] } },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take: opts.limit ?? 200,
    include: { payment: true },
  });
  const summary = { checked: rows.length, held: 0, dropped: 0, pending: 0 };
  for (const row of rows) {
    const p = row.payment;
    const kind = row.status as 'dust' | 'foreign';
    const token = row.tokenAddress ?? p.tokenAddress;
    // A configured network only: a transfer on one no longer configured waits, still recorded.
    const network = deps.chains.networks().find((n) => n.chainId === row.chainId);
    const asset = network?.assets.find((a) => a.tokenAddress.toLowerCase() === token.toLowerCase());
    if (!network || (kind === 'foreign' && !asset)) {
      summary.pending += 1;
      continue;
    }
    const outcome = await verifyIncomingTransfer(deps.chains.get(row.chainId), {
      txHash: row.txHash,
      ordinal: row.ordinal,
      token,
      to: p.escrowAddress ?? '',
      confirmations: network.confirmations,
    });
    if (outcome === 'pending') {
      summary.pending += 1;
      continue;
    }
    await deps.prisma.$transaction(async (tx) => {
      // Conditional: an overlapping sweep that got here first wins, and this one writes nothing.
      const { count } = await tx.paymentTransfer.updateMany({
        where: { id: row.id, status: kind },
        data: { status: `${kind}_${outcome === 'confirmed' ? 'confirmed' : 'dropped'}`, role: kind },
      });
      if (count !== 1 || outcome !== 'confirmed') return;
      const key = transferKey({ chainId: row.chainId, txHash: row.txHash, to: p.escrowAddress ?? '', ordinal: row.ordinal });
      const held =
        kind === 'foreign' && asset
          ? { chainId: row.chainId, tokenAddress: asset.tokenAddress, symbol: asset.symbol, decimals: asset.decimals }
          : undefined;
      await recordIncident(
        tx,
        p,
        { kind, amountAtomic: row.amountAtomic.toFixed(), transferKey: key, ...(held ? { asset: held } : {}) },
        key,
      );
    });
    if (outcome === 'confirmed') summary.held += 1;
    else summary.dropped += 1;
  }
  return summary;
}
