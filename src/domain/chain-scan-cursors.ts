import type { PrismaClient } from '../db/client';

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
