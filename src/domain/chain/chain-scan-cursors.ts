import type { PrismaClient } from '../../db/client';

/**
 * Each network's chain scanner's progress: the next block it reads (the scanner's cursor lives in its
 * workflow; this copy is what the operations metrics read). A scan that went back (a reorg) moves it
 * back too: the row says where the scanner is, not how far it ever got.
 */
export async function recordScanCursor(prisma: PrismaClient, chainId: number, nextFromBlock: string): Promise<void> {
  await prisma.$executeRaw`
    INSERT INTO chain_scan_cursors (chain_id, next_from_block, scanned_at)
    VALUES (${chainId}, ${BigInt(nextFromBlock)}, now())
    ON CONFLICT (chain_id) DO UPDATE SET next_from_block = EXCLUDED.next_from_block, scanned_at = EXCLUDED.scanned_at`;
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
