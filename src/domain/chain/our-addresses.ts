import type { PrismaClient } from '../../db/client';

/**
 * Of these recipients (lowercase), the ones a scanned transfer's owner may be: a Payment's escrow
 * address, a deposit address or a vault (the addresses the scanner's takers look up, and no other). One
 * query for a whole scanned range, however many transfers it holds: on a busy token nearly all of
 * them are someone else's, and each is then settled by this lookup instead of a query per owner.
 * It reads the database after the range's logs were read, so an address committed before its
 * transfer was mined is always found (docs/decisions/custody-and-chains.md, "The scanner under mainnet traffic").
 */
export async function ownedRecipients(prisma: PrismaClient, recipients: string[]): Promise<Set<string>> {
  if (recipients.length === 0) return new Set();
  const rows = await prisma.$queryRaw<Array<{ address: string }>>`
    SELECT escrow_address AS address FROM payments WHERE escrow_address = ANY(${recipients}::text[])
    UNION SELECT address FROM deposit_addresses WHERE address = ANY(${recipients}::text[])
    UNION SELECT address FROM vaults WHERE address = ANY(${recipients}::text[])`;
  return new Set(rows.map((r) => r.address));
}
