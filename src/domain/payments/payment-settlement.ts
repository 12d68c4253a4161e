import type { Payment } from '../../generated/prisma/client';
import type { ChainRegistry } from '../../chain/registry';
import type { PrismaClient } from '../../db/client';
import { payoutProblem, recordManualNetLeg, type ExpectedPayout } from '../settlement/manual-payout';
import { feeLegs, replaceStuckLegsBeforeCheck, sendSettlement, type SettlementSenderDeps } from '../settlement/settlement-sender';

/**
 * A Payment's payout from its escrow address: the net amount to the recipient's destination captured
 * at creation, the fees to the fee wallets, through the one settlement sender.
 */
export async function sendPaymentSettlement(
  deps: SettlementSenderDeps,
  paymentId: string,
  opts: { redelivery?: boolean } = {},
): Promise<{ txHash: string }> {
  const p = await deps.prisma.payment.findUniqueOrThrow({ where: { id: paymentId } });
  if (!p.escrowAddress) throw new Error(`payment ${p.id} has no escrow address`);
  const settlement = p.settlement as { destinationAddress?: string };
  return sendSettlement(deps, {
    ...(opts.redelivery ? { redelivery: true } : {}),
    source: { type: 'payment', id: p.id },
    chainId: p.chainId,
    token: p.tokenAddress,
    payer: { purpose: 'escrow', index: p.escrowIndex },
    legs: [
      ...(settlement.destinationAddress
        ? [{ leg: 'net' as const, to: settlement.destinationAddress, amountAtomic: BigInt(p.merchantNetAtomic.toFixed()) }]
        : []),
      ...feeLegs(deps.custody, BigInt(p.platformFeeAtomic.toFixed()), BigInt(p.partnerFeeAtomic.toFixed())),
    ],
  });
}

/** While the settlement confirms: its legs stuck under a rising base fee are sent again with higher fees. */
export async function replaceStuckPaymentLegs(deps: SettlementSenderDeps, paymentId: string): Promise<void> {
  await replaceStuckLegsBeforeCheck(deps, async () => {
    const p = await deps.prisma.payment.findUniqueOrThrow({
      where: { id: paymentId },
      select: { id: true, chainId: true, escrowIndex: true },
    });
    return { source: { type: 'payment', id: p.id }, chainId: p.chainId, payer: { purpose: 'escrow', index: p.escrowIndex } };
  });
}

/** What an operator's hand-made payout of this Payment must be: its net amount, escrow to destination. */
export function expectedPaymentPayout(p: Payment, confirmations: number): ExpectedPayout {
  return {
    chainId: p.chainId,
    token: p.tokenAddress,
    from: p.escrowAddress ?? '',
    to: String((p.settlement as { destinationAddress?: string }).destinationAddress ?? ''),
    amountAtomic: BigInt(p.merchantNetAtomic.toFixed()),
    confirmations,
  };
}

/** Records a verified hand-made payout as the net leg; false (nothing recorded) when the chain says otherwise. */
export async function recordManualPaymentPayout(
  deps: { prisma: PrismaClient; chains: ChainRegistry },
  paymentId: string,
  txHash: string,
): Promise<boolean> {
  const p = await deps.prisma.payment.findUniqueOrThrow({ where: { id: paymentId } });
  const expected = expectedPaymentPayout(p, deps.chains.network(p.chainId).confirmations);
  if (await payoutProblem(deps.chains, txHash, expected)) return false;
  await recordManualNetLeg(deps.prisma, { type: 'payment', id: paymentId }, txHash, expected);
  return true;
}
