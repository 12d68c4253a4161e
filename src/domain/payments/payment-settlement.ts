import { feeLegs, sendSettlement, type SettlementSenderDeps } from '../settlement/settlement-sender';

/**
 * A Payment's payout from its escrow address: the net amount to the recipient's destination captured
 * at creation, the fees to the fee wallets, through the one settlement sender.
 */
export async function sendPaymentSettlement(deps: SettlementSenderDeps, paymentId: string): Promise<{ txHash: string }> {
  const p = await deps.prisma.payment.findUniqueOrThrow({ where: { id: paymentId } });
  if (!p.escrowAddress) throw new Error(`payment ${p.id} has no escrow address`);
  const settlement = p.settlement as { destinationAddress?: string };
  return sendSettlement(deps, {
    source: { type: 'payment', id: p.id },
    chainId: p.chainId,
    token: p.tokenAddress,
    payer: { purpose: 'escrow', index: p.escrowIndex },
    legs: [
      ...(settlement.destinationAddress ? [{ leg: 'net' as const, to: settlement.destinationAddress, amountAtomic: BigInt(p.merchantNetAtomic.toFixed()) }] : []),
      ...feeLegs(deps.custody, BigInt(p.platformFeeAtomic.toFixed()), BigInt(p.partnerFeeAtomic.toFixed())),
    ],
  });
}
