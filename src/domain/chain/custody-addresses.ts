import type { Prisma, PrismaClient } from '../../db/client';
import type { AddressBook, KeyPath } from '../../custody';

type Db = PrismaClient | Prisma.TransactionClient;

/** The treasury and the fee wallets: derived at fixed paths, registered at start-up. */
export const SERVICE_WALLETS: readonly KeyPath[] = [
  { purpose: 'treasury', index: 0 },
  { purpose: 'fee', index: 0 },
  { purpose: 'fee', index: 1 },
];

/**
 * Records an address custody derived and the service hands out (in the transaction that hands it out).
 * Anything recorded here can never be a payout destination, and money moving between two of these
 * addresses is never a new deposit or payment.
 */
export async function registerCustodyAddress(db: Db, custody: AddressBook, path: KeyPath): Promise<string> {
  const row = custodyAddressRow(custody, path);
  await db.custodyAddress.createMany({ data: [row], skipDuplicates: true });
  return row.address;
}

/** The row registerCustodyAddress inserts (with skipDuplicates), for a caller that batches its transaction. */
export function custodyAddressRow(custody: AddressBook, path: KeyPath) {
  return { address: custody.deriveAddress(path).toLowerCase(), purpose: path.purpose, custodyIndex: path.index };
}

/**
 * The service wallets the database already has (treasury and fee rows) that these keys derive
 * differently: keys of another seed than the one the service has been running with. Each says what
 * disagrees.
 */
export async function serviceWalletDisagreements(db: Db, custody: AddressBook): Promise<string[]> {
  const rows = await db.custodyAddress.findMany({
    where: { OR: SERVICE_WALLETS.map((p) => ({ purpose: p.purpose, custodyIndex: p.index })) },
    select: { address: true, purpose: true, custodyIndex: true },
  });
  return rows
    .map((row) => ({
      row,
      derived: custody.deriveAddress({ purpose: row.purpose as KeyPath['purpose'], index: row.custodyIndex }).toLowerCase(),
    }))
    .filter(({ row, derived }) => row.address !== derived)
    .map(
      ({ row, derived }) => `${row.purpose}/${row.custodyIndex} is ${row.address} in custody_addresses, the public keys derive ${derived}`,
    );
}

export async function registerServiceWallets(db: Db, custody: AddressBook): Promise<void> {
  for (const path of SERVICE_WALLETS) await registerCustodyAddress(db, custody, path);
}

/** Is this address one the service controls? (Case-insensitive; the fixed wallets are derived, so never missed.) */
export async function isServiceControlled(db: Db, custody: AddressBook, address: string): Promise<boolean> {
  const lower = address.toLowerCase();
  if (SERVICE_WALLETS.some((p) => custody.deriveAddress(p).toLowerCase() === lower)) return true;
  return (await db.custodyAddress.count({ where: { address: lower } })) > 0;
}

/**
 * Is a transfer from this address the service moving its own money (never a payment or deposit)? Every
 * service address but a vault: a vault holds a payer's funds, and its transfer to an escrow is that
 * payer paying the Payment, seen and verified like any other.
 */
export async function isServiceSender(db: Db, custody: AddressBook, address: string): Promise<boolean> {
  const lower = address.toLowerCase();
  if (SERVICE_WALLETS.some((p) => custody.deriveAddress(p).toLowerCase() === lower)) return true;
  return (await db.custodyAddress.count({ where: { address: lower, purpose: { not: 'vault' } } })) > 0;
}

/** Why an address can't receive money the service sends (refunds, recoveries, payouts, settlement destinations). */
export type DestinationRefusal = 'service_controlled' | 'zero_address' | 'token_contract';

export const DESTINATION_REFUSAL_MESSAGES: Record<DestinationRefusal, string> = {
  service_controlled: 'This address belongs to the service (an escrow, deposit, vault, treasury or fee address) and cannot receive funds',
  zero_address: 'The zero address cannot receive funds: tokens sent there are lost',
  token_contract: 'A token contract cannot receive funds: tokens sent there are lost',
};

/**
 * The one destination rule of every money-out path that takes an address: never the zero address,
 * never a token contract the service moves (tokens sent to it are stuck for good), never an address
 * the service controls, except where `ownMoney` says the money is that address's own (a vault's late
 * funding going back to it: vaults/vault-returns.ts). Answers why not, or null.
 */
export async function destinationRefusal(
  db: Db,
  custody: AddressBook,
  address: string,
  tokenContracts: readonly string[],
  ownMoney: (to: string) => Promise<boolean> = async () => false,
): Promise<DestinationRefusal | null> {
  const lower = address.toLowerCase();
  if (/^0x0{40}$/.test(lower)) return 'zero_address';
  if (tokenContracts.some((t) => t.toLowerCase() === lower)) return 'token_contract';
  if ((await isServiceControlled(db, custody, lower)) && !(await ownMoney(lower))) return 'service_controlled';
  return null;
}
