import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import { replaceStuckLegsBeforeCheck, sendSettlement, type SettlementSenderDeps } from '../settlement/settlement-sender';
import { checkSettlement, isLive, loadLegs, type SettlementSource } from '../settlement/settlement-legs';
import { postToLedger } from '../ledger/ledger';
import { lockVault } from './vaults';
import { writeVaultAudit } from './vault-audit';
import { vaultFundingPosting } from './vault-postings';
import { toFundingOperationView } from './vault-funding';
import type { TFundingOperation } from './vault.schemas';

const SERVICE = { type: 'service' as const, id: null };
const sourceOf = (fundingOperationId: string): SettlementSource => ({ type: 'vault_funding', id: fundingOperationId });

type Loaded = Awaited<ReturnType<typeof load>>;

async function load(prisma: PrismaClient, id: string) {
  const op = await prisma.vaultFundingOperation.findUniqueOrThrow({ where: { id } });
  const vault = await prisma.vault.findUniqueOrThrow({ where: { id: op.vaultId } });
  const payment = await prisma.payment.findUniqueOrThrow({
    where: { id: op.paymentId },
    select: { apiVersion: true, chainId: true, tokenAddress: true, assetCode: true, decimals: true },
  });
  const asset = { chainId: payment.chainId, tokenAddress: payment.tokenAddress, symbol: payment.assetCode, decimals: payment.decimals };
  return { op, vault, apiVersion: payment.apiVersion, asset };
}

/** Why the Payment takes no vault funding now (the reasonCode), or null while it is open and unexpired. */
async function closedToFunding(
  prisma: PrismaClient,
  paymentId: string,
  now: Date,
): Promise<'payment_not_open' | 'payment_quote_expired' | null> {
  const p = await prisma.payment.findUniqueOrThrow({ where: { id: paymentId }, select: { status: true, expiresAt: true } });
  if (p.status !== 'requires_payment_method') return 'payment_not_open';
  return p.expiresAt <= now ? 'payment_quote_expired' : null;
}

/**
 * The on-chain leg: the exact amount from the vault's address to the Payment's escrow, through the one
 * settlement sender (leg 'net' of source vault_funding:<id>: signed once, recorded before broadcast,
 * re-sent byte for byte on a retry, the vault topped up with gas from the treasury). Idempotent: a
 * retry after a crash re-broadcasts the recorded leg, and an operation past 'authorized' only answers.
 * A Payment closed or expired since the authorize is not paid: the operation fails (its reserve freed)
 * with reasonCode payment_not_open or payment_quote_expired, and the workflow ends 'failed'.
 */
export async function sendVaultFunding(deps: SettlementSenderDeps, fundingOperationId: string): Promise<TFundingOperation> {
  const { op, vault } = await load(deps.prisma, fundingOperationId);
  if (op.status !== 'authorized') return toFundingOperationView(op);
  // Time passes between authorize and send: new money goes only to a Payment still open for it. A leg
  // already signed is followed through (it may be mined whatever we decide now).
  const closed = await closedToFunding(deps.prisma, op.paymentId, new Date());
  if (closed && !(await loadLegs(deps.prisma, sourceOf(op.id))).some(isLive)) return failVaultFunding(deps.prisma, op.id, closed);
  const { txHash } = await sendSettlement(deps, {
    source: sourceOf(op.id),
    chainId: op.chainId,
    token: op.tokenAddress,
    payer: { purpose: 'vault', index: vault.custodyIndex },
    legs: [{ leg: 'net', to: op.toAddress, amountAtomic: BigInt(op.amountAtomic.toFixed()) }],
  });
  return deps.prisma.$transaction(async (tx) => {
    const now = new Date();
    const moved = await tx.vaultFundingOperation.updateMany({
      where: { id: op.id, status: 'authorized', statusVersion: op.statusVersion },
      data: { status: 'broadcast', statusVersion: op.statusVersion + 1, broadcastAt: now, transactionHash: txHash.toLowerCase() },
    });
    if (moved.count === 1) {
      await writeVaultAudit(tx, vault, {
        policyId: null,
        eventType: 'vault.funding.broadcast',
        actor: SERVICE,
        payload: { fundingOperationId: op.id, paymentId: op.paymentId, transactionHash: txHash.toLowerCase() },
      });
    }
    return toFundingOperationView(await tx.vaultFundingOperation.findUniqueOrThrow({ where: { id: op.id } }));
  });
}

/** While the funding confirms: its leg stuck under a rising base fee is sent again with higher fees. */
export async function replaceStuckFundingLeg(deps: SettlementSenderDeps, fundingOperationId: string): Promise<void> {
  await replaceStuckLegsBeforeCheck(deps, async () => {
    const { op, vault } = await load(deps.prisma, fundingOperationId);
    return { source: sourceOf(op.id), chainId: op.chainId, payer: { purpose: 'vault', index: vault.custodyIndex } };
  });
}

/**
 * Re-reads the leg at the confirmation depth. Confirmed: the operation is confirmed, the vault's
 * funding posting written and vault.funding_posted emitted, in one transaction; reverted: it needs an operator (vault.funding_requires_intervention);
 * still pending: nothing changes. Each change is conditional on the statusVersion it read.
 */
export async function checkVaultFunding(
  deps: { prisma: PrismaClient; chains: Pick<ChainRegistry, 'get'> },
  fundingOperationId: string,
  confirmations: number,
): Promise<TFundingOperation> {
  const loaded = await load(deps.prisma, fundingOperationId);
  const { op } = loaded;
  if (op.status !== 'broadcast') return toFundingOperationView(op);
  const outcome = await checkSettlement(deps, sourceOf(op.id), confirmations);
  if (outcome === 'pending') return toFundingOperationView(op);
  if (outcome === 'reverted') return failVaultFunding(deps.prisma, fundingOperationId, 'transfer_reverted');
  return confirmFunding(deps.prisma, loaded, op.transactionHash!);
}

/**
 * The one way an operation is confirmed: conditional on the statusVersion read, in one transaction
 * with the vault's funding posting and vault.funding_posted, so it is posted once whoever gets there
 * (the workflow's check, or the reconciliation pass for a leg confirmed after its workflow gave up).
 */
async function confirmFunding(
  prisma: PrismaClient,
  { op, vault, apiVersion, asset }: Loaded,
  transactionHash: string,
): Promise<TFundingOperation> {
  return prisma.$transaction(async (tx) => {
    // It stops reserving under the vault's lock, where refunds read the balance (createRefund).
    await lockVault(tx, vault.id);
    const now = new Date();
    const moved = await tx.vaultFundingOperation.updateMany({
      where: { id: op.id, statusVersion: op.statusVersion, status: { not: 'confirmed' } },
      data: {
        status: 'confirmed',
        statusVersion: op.statusVersion + 1,
        confirmedAt: now,
        transactionHash,
        broadcastAt: op.broadcastAt ?? now,
      },
    });
    if (moved.count === 1) {
      // The vault's side of the leg; the escrow's side is the Payment's own collection (vault-postings.ts).
      await postToLedger(
        tx,
        vaultFundingPosting({
          id: op.id,
          vaultId: vault.id,
          appId: vault.appId,
          paymentId: op.paymentId,
          amountAtomic: op.amountAtomic.toFixed(),
          asset,
        }),
      );
      const payload = { accountId: vault.accountId, vaultId: vault.id, fundingOperationId: op.id, paymentId: op.paymentId };
      await writeVaultAudit(
        tx,
        vault,
        {
          policyId: null,
          eventType: 'vault.funding_posted',
          actor: SERVICE,
          payload: { ...payload, transactionHash, amountAtomic: op.amountAtomic.toFixed() },
        },
        { apiVersion, events: [{ name: 'vault.funding_posted', payload }] },
      );
    }
    return toFundingOperationView(await tx.vaultFundingOperation.findUniqueOrThrow({ where: { id: op.id } }));
  });
}

/**
 * A leg that outlived its workflow (the workflow gave up: failureReason set) and may still be mined,
 * for the reconciliation pass: re-read at the network's depth; confirmed, the operation is confirmed
 * and posted once (confirmFunding), even one failed while its send was still under way; reverted, it
 * is failed. Pending: unchanged, looked at again next pass.
 */
export async function followLateFunding(
  deps: { prisma: PrismaClient; chains: Pick<ChainRegistry, 'get' | 'network'> },
  fundingOperationId: string,
): Promise<'posted' | 'failed' | 'pending'> {
  const loaded = await load(deps.prisma, fundingOperationId);
  const outcome = await checkSettlement(deps, sourceOf(loaded.op.id), deps.chains.network(loaded.op.chainId).confirmations);
  if (outcome === 'pending') return 'pending';
  if (outcome === 'reverted') {
    await failVaultFunding(deps.prisma, loaded.op.id, 'transfer_reverted');
    return 'failed';
  }
  const net = (await loadLegs(deps.prisma, sourceOf(loaded.op.id))).find((l) => l.leg === 'net' && l.status === 'confirmed');
  if (!net) return 'pending';
  return (await confirmFunding(deps.prisma, loaded, net.txHash.toLowerCase())).status === 'confirmed' ? 'posted' : 'pending';
}

/**
 * The transfer failed (refused, reverted, or out of retries): vault.funding_requires_intervention. An
 * operation with no live leg is failed (its amount no longer reserved or counted against the limit);
 * one whose leg may still be mined keeps its status for an operator, so the money is never counted twice.
 */
export async function failVaultFunding(prisma: PrismaClient, fundingOperationId: string, reason: string): Promise<TFundingOperation> {
  const { op, vault, apiVersion } = await load(prisma, fundingOperationId);
  if (op.status === 'confirmed' || op.status === 'failed') return toFundingOperationView(op);
  const live = (await loadLegs(prisma, sourceOf(op.id))).some(isLive);
  return prisma.$transaction(async (tx) => {
    const moved = await tx.vaultFundingOperation.updateMany({
      where: { id: op.id, statusVersion: op.statusVersion },
      data: live
        ? { failureReason: reason, statusVersion: op.statusVersion + 1 }
        : { status: 'failed', failureReason: reason, statusVersion: op.statusVersion + 1 },
    });
    if (moved.count === 1) {
      const payload = {
        accountId: vault.accountId,
        vaultId: vault.id,
        fundingOperationId: op.id,
        paymentId: op.paymentId,
        reasonCode: reason,
      };
      await writeVaultAudit(
        tx,
        vault,
        { policyId: null, eventType: 'vault.funding_requires_intervention', actor: SERVICE, payload },
        { apiVersion, events: [{ name: 'vault.funding_requires_intervention', payload }] },
      );
    }
    return toFundingOperationView(await tx.vaultFundingOperation.findUniqueOrThrow({ where: { id: op.id } }));
  });
}
