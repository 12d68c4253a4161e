import type { Prisma, PrismaClient } from '../../db/client';

type Db = PrismaClient | Prisma.TransactionClient;

/** What one payer's confirmed funding transfers counted for a Payment (address lowercase). */
export interface PayerShare {
  address: string;
  amountAtomic: bigint;
}

export interface CountedTransfer {
  fromAddress: string;
  amountAtomic: bigint;
  /** The part of the transfer past the Payment's amount: an excess incident of its own, not the Payment's. */
  excessAtomic: bigint;
}

/**
 * Whose money a Payment's funding is: each confirmed funding transfer counts its amount less the
 * excess it carried, summed per sender, in the order given (the first payer first). Every return of
 * the Payment's funds (a refund, an underpaid or lapsed-quote incident) pays each payer back at most
 * its share.
 */
export function sharesByPayer(transfers: readonly CountedTransfer[]): PayerShare[] {
  const shares = new Map<string, bigint>();
  for (const t of transfers) {
    const address = t.fromAddress.toLowerCase();
    shares.set(address, (shares.get(address) ?? 0n) + t.amountAtomic - t.excessAtomic);
  }
  return [...shares].filter(([, amountAtomic]) => amountAtomic > 0n).map(([address, amountAtomic]) => ({ address, amountAtomic }));
}

/** A Payment's payer shares as the chain showed them: its confirmed funding transfers, oldest first. */
export async function payerShares(db: Db, paymentId: string): Promise<PayerShare[]> {
  const transfers = await db.paymentTransfer.findMany({
    where: { paymentId, status: 'confirmed', role: 'funding' },
    orderBy: [{ blockNumber: 'asc' }, { createdAt: 'asc' }, { ordinal: 'asc' }],
  });
  const excess = await db.paymentIncident.findMany({
    where: { paymentId, kind: 'excess', transferId: { in: transfers.map((t) => t.id) } },
  });
  const excessOf = (id: string) => excess.filter((i) => i.transferId === id).reduce((acc, i) => acc + BigInt(i.amountAtomic.toFixed()), 0n);
  return sharesByPayer(
    transfers.map((t) => ({ fromAddress: t.fromAddress, amountAtomic: BigInt(t.amountAtomic.toFixed()), excessAtomic: excessOf(t.id) })),
  );
}
