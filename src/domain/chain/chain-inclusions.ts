import type { PrismaClient } from '../../db/client';
import type { Transfer } from '../../chain/types';

/**
 * Records where a scanned range's transactions of ours are mined (live finality reads it): the
 * transfers to our addresses (`owned`) and any whose transaction is a settlement leg (it pays someone
 * else, so only its hash says it is ours). One statement per range, however many transfers it holds.
 * A transaction read again in another block (a reorg mined it elsewhere) moves there.
 */
export async function recordInclusions(
  prisma: PrismaClient,
  chainId: number,
  range: { transfers: Transfer[]; owned: Set<Transfer> },
): Promise<void> {
  if (range.transfers.length === 0) return;
  const hashes = range.transfers.map((t) => t.txHash.toLowerCase());
  const blocks = range.transfers.map((t) => t.blockNumber.toString());
  const ours = range.transfers.map((t) => range.owned.has(t));
  await prisma.$executeRaw`
    INSERT INTO chain_inclusions (chain_id, tx_hash, block_number)
    SELECT ${chainId}, t.tx_hash, max(t.block_number)
      FROM unnest(${hashes}::text[], ${blocks}::bigint[], ${ours}::boolean[]) AS t(tx_hash, block_number, ours)
     WHERE t.ours OR EXISTS (SELECT 1 FROM settlement_legs l WHERE l.tx_hash = t.tx_hash)
     GROUP BY t.tx_hash
    ON CONFLICT (chain_id, tx_hash) DO UPDATE SET block_number = EXCLUDED.block_number, seen_at = now()
     WHERE chain_inclusions.block_number <> EXCLUDED.block_number`;
}

/**
 * A reorg: every inclusion from `fromBlock` on may be gone or elsewhere. Forgotten here; the rescan
 * from that block writes back those the new chain holds, so until it does they read as not mined.
 */
export async function forgetInclusionsFrom(prisma: PrismaClient, chainId: number, fromBlock: bigint): Promise<void> {
  await prisma.$executeRaw`DELETE FROM chain_inclusions WHERE chain_id = ${chainId} AND block_number >= ${fromBlock}`;
}
