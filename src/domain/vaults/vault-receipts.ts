import { Prisma, type PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { Transfer } from '../../chain/types';
import { transferKey } from '../../chain/transfer-key';
import { newId } from '../values/ids';
import { verifyIncomingTransfer } from '../chain/incoming-transfers';
import { postToLedger } from '../ledger/ledger';
import { vaultReceiptPosting, vaultReceiptReversalPosting } from './vault-postings';

/** How long a posted receipt is re-verified (a reorg deeper than the depth), as deposits are. */
export const REVERIFY_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * The scanner's taker for transfers into a vault address: records a receipt ('seen'), once per
 * transfer identity (transfer_key survives a re-mine at another log index). Nothing is posted here:
 * the reconciliation pass follows it to the depth (followVaultReceipts). A receipt dropped earlier and
 * seen again (re-mined after a reorg) is followed again. Answers false when the recipient is no vault.
 */
export async function takeVaultTransfer(
  deps: { prisma: PrismaClient; chains: Pick<ChainRegistry, 'network'> },
  transfer: Transfer,
): Promise<boolean> {
  const to = transfer.to.toLowerCase();
  const vault = await deps.prisma.vault.findUnique({ where: { address: to }, select: { id: true, appId: true } });
  // One vault on every chain: its address is the same on each, so a transfer on any of them is its.
  if (!vault) return false;
  const asset = deps.chains.network(transfer.chainId).assets.find((a) => a.tokenAddress.toLowerCase() === transfer.token.toLowerCase());
  // Not a configured asset, or a zero-value log: the vault's, but nothing to book.
  if (!asset || transfer.amountAtomic <= 0n) return true;
  const key = transferKey({ chainId: transfer.chainId, txHash: transfer.txHash, to, ordinal: transfer.ordinal });
  await deps.prisma.vaultReceipt.createMany({
    data: [
      {
        id: newId('vaultReceipt'),
        vaultId: vault.id,
        appId: vault.appId,
        chainId: transfer.chainId,
        tokenAddress: asset.tokenAddress,
        assetSymbol: asset.symbol,
        decimals: asset.decimals,
        transferKey: key,
        txHash: transfer.txHash.toLowerCase(),
        logIndex: transfer.logIndex,
        ordinal: transfer.ordinal,
        blockNumber: transfer.blockNumber.toString(),
        fromAddress: transfer.from.toLowerCase(),
        amountAtomic: new Prisma.Decimal(transfer.amountAtomic.toString()),
        status: 'seen',
      },
    ],
    skipDuplicates: true,
  });
  await deps.prisma.vaultReceipt.updateMany({
    where: { transferKey: key, status: 'dropped' },
    data: { status: 'seen', logIndex: transfer.logIndex, blockNumber: transfer.blockNumber.toString() },
  });
  return true;
}

export interface VaultReceiptSweep {
  checked: number;
  posted: number;
  dropped: number;
  pending: number;
  reversed: number;
}

type ReceiptRow = Awaited<ReturnType<PrismaClient['vaultReceipt']['findFirstOrThrow']>>;

/**
 * One bounded batch, run by the payment reconciliation pass (as dust is): every 'seen' receipt is
 * re-read at the network's depth; confirmed, it is posted (receipt:<id>) in the transaction that marks
 * it 'posted'; gone, it is 'dropped' with nothing posted; not deep yet, left for the next pass. Then
 * posted receipts of the last week, least recently verified first: one gone from the chain is
 * 'reversed' with its reversing posting. Each change is conditional on the status read, so an
 * overlapping pass writes nothing twice; the postings are idempotent on their legs anyway.
 */
export async function followVaultReceipts(
  deps: { prisma: PrismaClient; chains: Pick<ChainRegistry, 'get' | 'network'> },
  opts: { limit?: number; now?: Date } = {},
): Promise<VaultReceiptSweep> {
  const limit = opts.limit ?? 200;
  const now = opts.now ?? new Date();
  const summary: VaultReceiptSweep = { checked: 0, posted: 0, dropped: 0, pending: 0, reversed: 0 };
  const seen = await deps.prisma.vaultReceipt.findMany({
    where: { status: 'seen' },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take: limit,
  });
  for (const r of seen) {
    summary.checked += 1;
    const outcome = await verify(deps, r);
    if (outcome === 'pending') {
      summary.pending += 1;
      continue;
    }
    const moved = await deps.prisma.$transaction(async (tx) => {
      const { count } = await tx.vaultReceipt.updateMany({
        where: { id: r.id, status: 'seen' },
        data: outcome === 'confirmed' ? { status: 'posted', postedAt: now, verifiedAt: now } : { status: 'dropped' },
      });
      if (count === 1 && outcome === 'confirmed') await postToLedger(tx, vaultReceiptPosting(r));
      return count === 1;
    });
    if (moved) summary[outcome === 'confirmed' ? 'posted' : 'dropped'] += 1;
  }
  const posted = await deps.prisma.vaultReceipt.findMany({
    where: { status: 'posted', postedAt: { gte: new Date(now.getTime() - REVERIFY_WINDOW_MS) } },
    orderBy: [{ verifiedAt: { sort: 'asc', nulls: 'first' } }, { id: 'asc' }],
    take: limit,
  });
  for (const r of posted) {
    summary.checked += 1;
    const outcome = await verify(deps, r);
    if (outcome !== 'dropped') {
      // Re-included but not deep yet counts as still there: looked at again later, never reversed for it.
      await deps.prisma.vaultReceipt.updateMany({ where: { id: r.id, status: 'posted' }, data: { verifiedAt: now } });
      continue;
    }
    const moved = await deps.prisma.$transaction(async (tx) => {
      const { count } = await tx.vaultReceipt.updateMany({
        where: { id: r.id, status: 'posted' },
        data: { status: 'reversed', verifiedAt: now },
      });
      if (count === 1) await postToLedger(tx, vaultReceiptReversalPosting(r));
      return count === 1;
    });
    if (moved) summary.reversed += 1;
  }
  return summary;
}

function verify(deps: { chains: Pick<ChainRegistry, 'get' | 'network'> }, r: ReceiptRow) {
  const to = r.transferKey.split(':')[2]!;
  return verifyIncomingTransfer(deps.chains.get(r.chainId), {
    txHash: r.txHash,
    ordinal: r.ordinal,
    token: r.tokenAddress,
    to,
    confirmations: deps.chains.network(r.chainId).confirmations,
  });
}
