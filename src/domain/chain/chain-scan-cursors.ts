import type { PrismaClient } from '../../db/client';
import { nextBlockTimeMs } from './pure/block-time';

/**
 * Each network's chain scanner's progress: the next block it reads (the scanner's cursor lives in its
 * workflow; this copy is what the operations metrics and live finality read). A scan that went back (a
 * reorg) moves it back too: the row says where the scanner is, not how far it ever got.
 * `head`: the time of the block before nextFromBlock when the scan read it (null: not known, after a
 * reorg; absent: unchanged, as after a scan that found no new block). The measured block time follows it.
 */
export async function recordScanCursor(
  prisma: PrismaClient,
  chainId: number,
  nextFromBlock: string,
  head?: { at: Date | null },
): Promise<void> {
  // One scanner per network writes its row: reading it first races nothing but a retried attempt of the same scan.
  const previous = await prisma.chainScanCursor.findUnique({ where: { chainId } });
  const next = BigInt(nextFromBlock);
  const headBlockAt = head === undefined ? (previous?.headBlockAt ?? null) : head.at;
  const blockTimeMs = nextBlockTimeMs(previous, { nextFromBlock: next, headBlockAt });
  await prisma.$executeRaw`
    INSERT INTO chain_scan_cursors (chain_id, next_from_block, scanned_at, head_block_at, block_time_ms)
    VALUES (${chainId}, ${next}, now(), ${headBlockAt}, ${blockTimeMs})
    ON CONFLICT (chain_id) DO UPDATE SET next_from_block = EXCLUDED.next_from_block, scanned_at = EXCLUDED.scanned_at,
      head_block_at = EXCLUDED.head_block_at, block_time_ms = EXCLUDED.block_time_ms`;
}

/**
 * Whether the network's scanner has read every block up to and including `block`: every transfer
 * mined there has been handed to its owner (the cursor is written after the hand-over). No row yet:
 * the scanner has read nothing.
 */
export async function scannedThrough(prisma: PrismaClient, chainId: number, block: bigint): Promise<boolean> {
  const rows = await prisma.$queryRaw<Array<{ next: bigint }>>`
    SELECT next_from_block AS next FROM chain_scan_cursors WHERE chain_id = ${chainId}`;
  return rows.length > 0 && BigInt(rows[0]!.next) > block;
}
