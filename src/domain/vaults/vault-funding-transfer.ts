import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import { sendSettlement, type SettlementSenderDeps } from '../settlement/settlement-sender';
import { checkSettlement, isLive, loadLegs, type SettlementSource } from '../settlement/settlement-legs';
import { postToLedger } from '../ledger/ledger';
import { lockVault } from './vaults';
import { writeVaultAudit } from './vault-audit';
import { vaultFundingPosting } from './vault-postings';
import { toFundingOperationView } from './vault-funding';
import type { TFundingOperation } from './vault.schemas';

const SERVICE = { type: 'service' as const, id: null };
const sourceOf = (fundingOperationId: string): SettlementSource => ({ type: 'vault_funding', id: fundingOperationId });

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

/**
 * The on-chain leg: the exact amount from the vault's address to the Payment's escrow, through the one
 * settlement sender (leg 'net' of source vault_funding:<id>: signed once, recorded before broadcast,
 * re-sent byte for byte on a retry, the vault topped up with gas from the treasury). Idempotent: a
 * retry after a crash re-broadcasts the recorded leg, and an operation past 'authorized' only answers.
 */
export async function sendVaultFunding(deps: SettlementSenderDeps, fundingOperationId: string): Promise<TFundingOperation> {
  const { op, vault } = await load(deps.prisma, fundingOperationId);
  if (op.status !== 'authorized') return toFundingOperationView(op);
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
  const { op, vault, apiVersion, asset } = await load(deps.prisma, fundingOperationId);
  if (op.status !== 'broadcast') return toFundingOperationView(op);
  const outcome = await checkSettlement(deps, sourceOf(op.id), confirmations);
  if (outcome === 'pending') return toFundingOperationView(op);
  if (outcome === 'reverted') return failVaultFunding(deps.prisma, fundingOperationId, 'transfer_reverted');
  return deps.prisma.$transaction(async (tx) => {
    // It stops reserving under the vault's lock, where refunds read the balance (createRefund).
    await lockVault(tx, vault.id);
    const moved = await tx.vaultFundingOperation.updateMany({
      where: { id: op.id, status: 'broadcast', statusVersion: op.statusVersion },
      data: { status: 'confirmed', statusVersion: op.statusVersion + 1, confirmedAt: new Date() },
    });
    if (moved.count === 1) {
      // The vault's side of the leg; the escrow's side is the Payment's own collection (vault-postings.ts).
      await postToLedger(tx, vaultFundingPosting({ id: op.id, vaultId: vault.id, appId: vault.appId, paymentId: op.paymentId, amountAtomic: op.amountAtomic.toFixed(), asset }));
      const payload = { accountId: vault.accountId, vaultId: vault.id, fundingOperationId: op.id, paymentId: op.paymentId };
      await writeVaultAudit(
        tx,
        vault,
        { policyId: null, eventType: 'vault.funding_posted', actor: SERVICE, payload: { ...payload, transactionHash: op.transactionHash, amountAtomic: op.amountAtomic.toFixed() } },
        { apiVersion, events: [{ name: 'vault.funding_posted', payload }] },
      );
    }
    return toFundingOperationView(await tx.vaultFundingOperation.findUniqueOrThrow({ where: { id: op.id } }));
  });
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
      data: live ? { failureReason: reason, statusVersion: op.statusVersion + 1 } : { status: 'failed', failureReason: reason, statusVersion: op.statusVersion + 1 },
    });
    if (moved.count === 1) {
      const payload = { accountId: vault.accountId, vaultId: vault.id, fundingOperationId: op.id, paymentId: op.paymentId, reasonCode: reason };
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
