import type { Prisma, PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { KeyPath } from '../../custody';
import { replaceStuckLegsBeforeCheck, sendSettlement, type SettlementSenderDeps } from '../settlement/settlement-sender';
import { checkSettlement, isLive, loadLegs, type SettlementSource } from '../settlement/settlement-legs';
import { postToLedger, type LedgerAsset } from '../ledger/ledger';
import { lockVault } from '../vaults/vaults';
import { afterCheck, incidentStatusFor, refundConfirmedEvent, type ReturnStatus } from './fund-return-rules';
import { fundReturnPosting } from './fund-return-postings';
import { writeRefundEvent, type FundReturnRow } from './fund-returns';
import { assertReturnDestination, RETURN_DESTINATION_REFUSED, ReturnDestinationRefusedError } from './return-destination';
import { raiseAlert } from '../monitoring/alerts';

export const sourceOf = (r: Pick<FundReturnRow, 'id' | 'kind'>): SettlementSource => ({
  type: r.kind === 'refund' ? 'refund' : 'incident_recovery',
  id: r.id,
});

/** What a workflow needs to know of a return after each step. */
export interface ReturnState {
  status: ReturnStatus;
}

export async function load(prisma: PrismaClient, id: string) {
  const r = await prisma.fundReturn.findUniqueOrThrow({ where: { id } });
  const payment = await prisma.payment.findUniqueOrThrow({ where: { id: r.paymentId } });
  return { r, payment };
}

/** The key that signs: the Payment's escrow for a recovery, the recipient's vault for a refund. */
async function payerOf(prisma: PrismaClient, r: FundReturnRow, escrowIndex: number): Promise<KeyPath> {
  if (r.kind !== 'refund') return { purpose: 'escrow', index: escrowIndex };
  const vault = await prisma.vault.findUniqueOrThrow({ where: { id: r.vaultId! } });
  return { purpose: 'vault', index: vault.custodyIndex };
}

/**
 * One status change, conditional on the statusVersion it read, with what goes with it in the same
 * transaction: the incident's status (a recovery), the posting and the refund event (a confirmation).
 */
export async function move(
  prisma: PrismaClient,
  r: FundReturnRow,
  data: Prisma.FundReturnUpdateManyMutationInput & { status?: ReturnStatus },
  also?: (tx: Prisma.TransactionClient) => Promise<void>,
): Promise<ReturnState> {
  return prisma.$transaction(async (tx) => {
    // A refund stops reserving its vault's money under the vault's lock (see createRefund).
    if (r.kind === 'refund' && r.vaultId && data.status === 'confirmed') await lockVault(tx, r.vaultId);
    const moved = await tx.fundReturn.updateMany({
      where: { id: r.id, statusVersion: r.statusVersion },
      data: { ...data, statusVersion: r.statusVersion + 1 },
    });
    if (moved.count === 1) {
      if (r.incidentId && data.status)
        await tx.paymentIncident.update({ where: { id: r.incidentId }, data: { status: incidentStatusFor(data.status) } });
      await also?.(tx);
    }
    const now = await tx.fundReturn.findUniqueOrThrow({ where: { id: r.id } });
    return { status: now.status as ReturnStatus };
  });
}

/**
 * Sends the return through the one settlement sender (leg 'net' of source refund|incident_recovery:<id>:
 * signed once, recorded before broadcast, re-sent byte for byte on a retry; destinations the service
 * controls refused). Idempotent: a return past 'pending' only answers.
 */
export async function sendFundReturn(deps: SettlementSenderDeps, id: string): Promise<ReturnState> {
  const { r, payment } = await load(deps.prisma, id);
  if (r.status !== 'pending') return { status: r.status as ReturnStatus };
  let txHash: string;
  try {
    ({ txHash } = await sendSettlement(deps, {
      source: sourceOf(r),
      chainId: r.chainId,
      token: r.tokenAddress,
      payer: await payerOf(deps.prisma, r, payment.escrowIndex),
      legs: [{ leg: 'net', to: r.toAddress, amountAtomic: BigInt(r.amountAtomic.toFixed()) }],
      authorize: () => assertReturnDestination(deps.prisma, r),
    }));
  } catch (err) {
    if (err instanceof ReturnDestinationRefusedError) return holdRefusedReturn(deps, r, err);
    throw err;
  }
  return move(deps.prisma, r, { status: 'broadcast', broadcastAt: new Date(), transactionHash: txHash.toLowerCase() });
}

/**
 * The signer refused the destination or the amount: nothing was signed. A critical alert first (raised
 * once while open), then the return is held for an operator with the reason, so a retry of this step
 * after a crash still alerts.
 */
async function holdRefusedReturn(
  deps: SettlementSenderDeps,
  r: FundReturnRow,
  refused: ReturnDestinationRefusedError,
): Promise<ReturnState> {
  const { reason, allowedAtomic } = refused;
  const logger = deps.logger ?? { error: () => undefined, info: () => undefined };
  await raiseAlert(
    { prisma: deps.prisma, logger },
    {
      kind: RETURN_DESTINATION_REFUSED,
      severity: 'critical',
      subject: `fund_return:${r.id}`,
      details: {
        fundReturnId: r.id,
        kind: r.kind,
        paymentId: r.paymentId,
        incidentId: r.incidentId,
        destinationAddress: r.toAddress,
        amountAtomic: r.amountAtomic.toFixed(),
        approvalId: r.approvalId,
        reason,
        ...(allowedAtomic === undefined ? {} : { allowedAtomic: allowedAtomic.toString() }),
      },
    },
  );
  return move(deps.prisma, r, { status: 'requires_intervention', failureReason: reason });
}

/** While the return confirms: its leg stuck under a rising base fee is sent again with higher fees. */
export async function replaceStuckReturnLeg(deps: SettlementSenderDeps, id: string): Promise<void> {
  await replaceStuckLegsBeforeCheck(deps, async () => {
    const { r, payment } = await load(deps.prisma, id);
    return { source: sourceOf(r), chainId: r.chainId, payer: await payerOf(deps.prisma, r, payment.escrowIndex) };
  });
}

/**
 * Re-reads the leg at the confirmation depth. Confirmed: the return is confirmed and posted (and a
 * refund emits payment.partially_refunded or payment.refunded) in one transaction; reverted: held for
 * an operator; still pending: nothing changes.
 */
export async function checkFundReturn(
  deps: { prisma: PrismaClient; chains: Pick<ChainRegistry, 'get'> },
  id: string,
  confirmations: number,
): Promise<ReturnState> {
  const { r, payment } = await load(deps.prisma, id);
  if (r.status !== 'broadcast') return { status: r.status as ReturnStatus };
  const next = afterCheck(await checkSettlement(deps, sourceOf(r), confirmations));
  if (next === null) return { status: 'broadcast' };
  if (next !== 'confirmed') return move(deps.prisma, r, { status: next, failureReason: 'transfer_reverted' });
  return confirmFundReturn(deps.prisma, r, payment, {});
}

/**
 * The return's money reached its destination (its leg, or an operator's payout: then its hash): it is
 * confirmed and posted, and a refund emits payment.partially_refunded or payment.refunded, in one
 * transaction.
 */
export async function confirmFundReturn(
  prisma: PrismaClient,
  r: FundReturnRow,
  payment: Awaited<ReturnType<typeof load>>['payment'],
  also: { transactionHash?: string },
): Promise<ReturnState> {
  const amount = BigInt(r.amountAtomic.toFixed());
  return move(prisma, r, { status: 'confirmed', confirmedAt: new Date(), ...also }, async (tx) => {
    const asset = await returnAsset(tx, r, payment);
    await postToLedger(
      tx,
      fundReturnPosting({
        id: r.id,
        kind: r.kind as 'refund' | 'incident_recovery',
        appId: r.appId,
        paymentId: r.paymentId,
        recipientAccountId: payment.recipientAccountId,
        vaultId: r.vaultId,
        amountAtomic: amount,
        asset,
      }),
    );
    if (r.kind !== 'refund') return;
    const confirmed = await tx.fundReturn.aggregate({
      where: { paymentId: r.paymentId, kind: 'refund', status: 'confirmed' },
      _sum: { amountAtomic: true },
    });
    const total = BigInt(confirmed._sum.amountAtomic?.toFixed() ?? '0');
    await writeRefundEvent(tx, payment, r.id, 'confirmed', refundConfirmedEvent(BigInt(payment.amountAtomic.toFixed()), total));
  });
}

/**
 * The send failed (refused, out of tries) or was never confirmed. With no live leg nothing can move:
 * failed (the amount is free again and may be asked for anew); a leg that may still be mined keeps
 * the money reserved: requires_intervention.
 */
export async function failFundReturn(prisma: PrismaClient, id: string, reason: string): Promise<ReturnState> {
  const { r } = await load(prisma, id);
  if (r.status === 'confirmed' || r.status === 'failed' || r.status === 'requires_intervention')
    return { status: r.status as ReturnStatus };
  const live = (await loadLegs(prisma, sourceOf(r))).some(isLive);
  return move(prisma, r, { status: live ? 'requires_intervention' : 'failed', failureReason: reason });
}

/**
 * The asset a return leaves in: the Payment's, or, for the recovery of a foreign transfer (another
 * asset or chain), the one its hold was posted in.
 */
async function returnAsset(
  tx: Prisma.TransactionClient,
  r: FundReturnRow,
  payment: { chainId: number; tokenAddress: string; assetCode: string; decimals: number },
): Promise<LedgerAsset> {
  const own = { chainId: payment.chainId, tokenAddress: payment.tokenAddress, symbol: payment.assetCode, decimals: payment.decimals };
  if (r.chainId === payment.chainId && r.tokenAddress.toLowerCase() === payment.tokenAddress.toLowerCase()) return own;
  const held = r.incidentId
    ? await tx.ledgerEntry.findFirst({
        where: { posting: { sourceType: 'payment', sourceId: r.paymentId, leg: `incident:${r.incidentId}` }, chainId: r.chainId },
      })
    : null;
  if (!held)
    throw new Error(`fund return ${r.id} is on chain ${r.chainId} token ${r.tokenAddress}, and no hold of that asset was posted for it`);
  return { chainId: held.chainId, tokenAddress: held.tokenAddress, symbol: held.assetSymbol, decimals: held.decimals };
}
