import type { ChainRegistry } from '../../chain/registry';
import type { PrismaClient } from '../../db/client';
import type { Deposit, DepositAddress } from '../../generated/prisma/client';
import { payoutProblem, recordManualNetLeg, type ExpectedPayout } from '../settlement/manual-payout';
import {
  feeLegs,
  replaceStuckLegsBeforeCheck,
  sendSettlement,
  SettlementRefusedError,
  type SettlementSenderDeps,
} from '../settlement/settlement-sender';

/**
 * A deposit's payout from its deposit address: the net amount to the destination of the settlement
 * profile snapshot taken at detection, the fees to the fee wallets, through the one settlement sender.
 * Deposits are paid out as they came in: a destination on another chain or asset is refused.
 */
export async function sendDepositSettlement(deps: SettlementSenderDeps, depositId: string): Promise<{ txHash: string }> {
  const d = await deps.prisma.deposit.findUniqueOrThrow({ where: { id: depositId }, include: { depositAddress: true } });
  const snapshot = d.settlementProfileSnapshot as { destinationAddress?: string; chainId?: number; tokenAddress?: string };
  if (!snapshot.destinationAddress)
    throw new SettlementRefusedError('settlement_destination_missing', `deposit ${d.id} has no settlement destination`);
  if (snapshot.chainId !== d.chainId || String(snapshot.tokenAddress).toLowerCase() !== d.tokenAddress.toLowerCase()) {
    throw new SettlementRefusedError(
      'settlement_destination_mismatch',
      `deposit ${d.id} is in another asset than its settlement destination`,
    );
  }
  return sendSettlement(deps, {
    source: { type: 'deposit', id: d.id },
    chainId: d.chainId,
    token: d.tokenAddress,
    payer: { purpose: 'deposit', index: d.depositAddress.custodyIndex },
    legs: [
      { leg: 'net', to: snapshot.destinationAddress, amountAtomic: BigInt(d.netAtomic.toFixed()) },
      ...feeLegs(deps.custody, BigInt(d.platformFeeAtomic.toFixed()), BigInt(d.partnerFeeAtomic.toFixed())),
    ],
  });
}

/** While the settlement confirms: its legs stuck under a rising base fee are sent again with higher fees. */
export async function replaceStuckDepositLegs(deps: SettlementSenderDeps, depositId: string): Promise<void> {
  await replaceStuckLegsBeforeCheck(deps, async () => {
    const d = await deps.prisma.deposit.findUniqueOrThrow({ where: { id: depositId }, include: { depositAddress: true } });
    return {
      source: { type: 'deposit', id: d.id },
      chainId: d.chainId,
      payer: { purpose: 'deposit', index: d.depositAddress.custodyIndex },
    };
  });
}

/** What an operator's hand-made payout of this deposit must be: its net amount, deposit address to destination. */
export function expectedDepositPayout(d: Deposit & { depositAddress: DepositAddress }, confirmations: number): ExpectedPayout {
  return {
    chainId: d.chainId,
    token: d.tokenAddress,
    from: d.depositAddress.address ?? '',
    to: String((d.settlementProfileSnapshot as { destinationAddress?: string }).destinationAddress ?? ''),
    amountAtomic: BigInt(d.netAtomic.toFixed()),
    confirmations,
  };
}

/** Records a verified hand-made payout as the net leg; false (nothing recorded) when the chain says otherwise. */
export async function recordManualDepositPayout(
  deps: { prisma: PrismaClient; chains: ChainRegistry },
  depositId: string,
  txHash: string,
): Promise<boolean> {
  const d = await deps.prisma.deposit.findUniqueOrThrow({ where: { id: depositId }, include: { depositAddress: true } });
  const expected = expectedDepositPayout(d, deps.chains.network(d.chainId).confirmations);
  if (await payoutProblem(deps.chains, txHash, expected)) return false;
  await recordManualNetLeg(deps.prisma, { type: 'deposit', id: depositId }, txHash, expected);
  return true;
}
