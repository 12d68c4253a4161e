import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import { transferKey } from '../../chain/transfer-key';
import type { Transfer } from '../../chain/types';
import { toAtomic } from '../amounts/amounts';
import type { PaymentEngine } from '../engine/pure/engine';
import { newId } from '../values/ids';

/**
 * Takes a scanned transfer whose recipient is a Payment's escrow address: recorded once, then handed
 * to the Payment's workflow, which verifies it and decides what it is (funding, excess, duplicate,
 * late). A transfer below the asset's minimum is only recorded as dust: escrow addresses are public,
 * and dust must not wake a workflow (the dust sweep accounts for it). So is a foreign transfer, of
 * another asset or on another chain than the Payment's: the same sweep holds it for recovery. Answers false when the
 * recipient is no escrow address.
 */
export async function takePaymentTransfer(
  deps: { prisma: PrismaClient; chains: ChainRegistry; engine: Pick<PaymentEngine, 'transferSeen'> },
  transfer: Transfer,
): Promise<boolean> {
  const { prisma } = deps;
  const payment = await prisma.payment.findUnique({ where: { escrowAddress: transfer.to.toLowerCase() } });
  if (!payment) return false;
  const network = deps.chains.network(transfer.chainId);
  const asset = network.assets.find((a) => a.tokenAddress.toLowerCase() === transfer.token.toLowerCase());
  // Another asset, or the same address on another chain: never the Payment's funding, held for recovery.
  const foreign = transfer.chainId !== payment.chainId || transfer.token.toLowerCase() !== payment.tokenAddress.toLowerCase();
  const dust = !foreign && (!asset || transfer.amountAtomic < toAtomic(asset.minimumDeposit.amount, asset.decimals));
  const { count: inserted } = await prisma.paymentTransfer.createMany({
    data: [
      {
        id: newId('paymentTransfer'),
        paymentId: payment.id,
        chainId: transfer.chainId,
        txHash: transfer.txHash.toLowerCase(),
        logIndex: transfer.logIndex,
        ordinal: transfer.ordinal,
        blockNumber: transfer.blockNumber,
        fromAddress: transfer.from.toLowerCase(),
        amountAtomic: transfer.amountAtomic.toString(),
        ...(foreign ? { tokenAddress: transfer.token.toLowerCase() } : {}),
        status: foreign ? 'foreign' : dust ? 'dust' : 'pending',
      },
    ],
    skipDuplicates: true,
  });
  if (dust || foreign) return true;
  if (inserted === 0) {
    // Seen before (a rescan, a retried scan, a reorg that mined it again): once confirmed, it is done;
    // one a reorg dropped is handed over again, as the chain has it back.
    const row = await prisma.paymentTransfer.findFirst({
      where: { paymentId: payment.id, txHash: transfer.txHash.toLowerCase(), ordinal: transfer.ordinal },
      select: { status: true },
    });
    if (row && row.status !== 'pending' && row.status !== 'dropped') return true;
  }
  await deps.engine.transferSeen(payment, network.confirmations, {
    key: transferKey(transfer),
    txHash: transfer.txHash,
    logIndex: transfer.logIndex,
    amountAtomic: transfer.amountAtomic.toString(),
  });
  return true;
}
