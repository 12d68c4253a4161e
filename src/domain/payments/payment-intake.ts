import type { PrismaClient } from '../../db/client';
import { transferKey } from '../../chain/transfer-key';
import type { Transfer } from '../../chain/types';
import type { PaymentEngine } from '../engine';
import { newId } from '../ids';
import { recordTransferAfterClose } from './payment-store';

/**
 * Takes a scanned transfer whose recipient is a Payment's escrow address: recorded once, then handed
 * to the Payment's workflow, or, when that has finished, recorded for recovery here. Answers false
 * when the recipient is no escrow address.
 */
export async function takePaymentTransfer(
  deps: { prisma: PrismaClient; engine: Pick<PaymentEngine, 'transferSeen'> },
  transfer: Transfer,
): Promise<boolean> {
  const { prisma } = deps;
  const payment = await prisma.payment.findUnique({ where: { escrowAddress: transfer.to.toLowerCase() }, select: { id: true } });
  if (!payment) return false;
  const key = transferKey(transfer.chainId, transfer.txHash, transfer.logIndex);
  const { count: inserted } = await prisma.paymentTransfer.createMany({
    data: [
      {
        id: newId('paymentTransfer'),
        paymentId: payment.id,
        chainId: transfer.chainId,
        txHash: transfer.txHash.toLowerCase(),
        logIndex: transfer.logIndex,
        blockNumber: transfer.blockNumber,
        fromAddress: transfer.from.toLowerCase(),
        amountAtomic: transfer.amountAtomic.toString(),
        status: 'pending',
      },
    ],
    skipDuplicates: true,
  });
  if (inserted === 0) {
    // Seen before (a rescan, a retried scan): once its Payment has recorded an outcome, it is done.
    const row = await prisma.paymentTransfer.findFirst({
      where: { chainId: transfer.chainId, txHash: transfer.txHash.toLowerCase(), logIndex: transfer.logIndex },
      select: { status: true },
    });
    if (row && row.status !== 'pending') return true;
  }
  const handed = await deps.engine.transferSeen(payment.id, {
    key,
    txHash: transfer.txHash,
    logIndex: transfer.logIndex,
    amountAtomic: transfer.amountAtomic.toString(),
  });
  if (handed === 'closed') await recordTransferAfterClose(prisma, payment.id, { key, amountAtomic: transfer.amountAtomic });
  return true;
}
