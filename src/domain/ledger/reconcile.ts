import { getAddress, type Address, type Hash } from 'viem';
import { Prisma, type PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { TNetworkConfig } from '../../config/environments';
import type { AddressBook } from '../../custody';
import { syncAlerts, type AlertDeps, type AlertInput } from '../monitoring/alerts';
import { SERVICE_WALLETS } from '../chain/custody-addresses';
import type { AddressPurpose, BooksDifference, InFlightAmount, ReconcilePage, ReconcileResult } from './pure/reconcile-report';

export type { AddressPurpose, BooksDifference, InFlightAmount, ReconcilePage, ReconcileResult } from './pure/reconcile-report';

/**
 * The books against the chain (`npm run cli -- ledger reconcile`, the ledgerReconciliationWorkflow).
 *
 * For every address the service controls (custody_addresses plus the fixed SERVICE_WALLETS) and every
 * configured asset of its network, the journal's books for that address must equal the token balance
 * the chain holds there, once money in flight is accounted for:
 *
 *   escrow address of Payment P     escrow:P                     (every network: foreign transfers are held there)
 *   deposit address A               custody:deposit:A            (the address's network)
 *   vault address of vault V        custody:vault:V              (every network: one vault on each)
 *   fee wallet 0                    fees:platform                (every network)
 *   fee wallet 1                    fees:partner:<appId>, summed (every network)
 *   treasury, any other address     no book: holds no tokens     (every network)
 *
 * These books are assets of the service: positive while it holds the money. In flight (signed, added
 * to the books before comparing), see docs/decisions/ledger-and-money-on-chain.md "Reconciliation":
 *   + a transfer to an escrow address recorded in payment_transfers while it is pending (or dust or a
 *     foreign transfer not yet followed, in its own chain and token), or, of a Payment that is not terminal, confirmed before it posted its collection;
 *   + a deposit detected or confirming (its receipt is posted at the confirmation depth);
 *   + a transfer into a vault seen and not yet posted (vault_receipts 'seen');
 *   - / + a live settlement leg (broadcast | confirmed) mined successfully at or below the head read,
 *     whose source has not posted its settlement: out of its `from`, into its `to` when that is ours;
 *     a vault's funding leg only out of the vault until its funding posting: the escrow counts it as
 *     a Payment transfer (above), as any payer's.
 * difference = chain - books - in flight; anything else than 0 is a difference. Books of an escrow or
 * deposit address the service doesn't know (no such Payment or address) are differences too.
 *
 * Consistency: the database is read first, in one REPEATABLE READ snapshot, then each network's head,
 * then the live legs again, then balances at that head. Everything the snapshot records was seen on
 * chain before the head was read. A leg is recorded before it is broadcast, so the second read holds
 * every leg mined at or below the head, even one recorded after the snapshot (read once, it looked
 * like money missing from its sender). What the chain has and the database does not yet (a transfer
 * the scanner has not read) shows as a difference for a moment: the workflow checks again before it
 * alerts.
 */
export interface ReconcileDeps {
  prisma: PrismaClient;
  chains: Pick<ChainRegistry, 'get' | 'networks'>;
  custody: AddressBook;
}

const TERMINAL_PAYMENT = ['succeeded', 'failed', 'cancelled', 'expired'];
const PARTNER_BOOKS = 'fees:partner:*';
/** Parallel chain reads per call: enough to hide RPC latency, few enough not to hammer a provider. */
const READ_CONCURRENCY = 8;

interface Target {
  /** Lower case. */
  address: string;
  purpose: AddressPurpose;
  book: string | null;
  chainIds: number[];
}

interface Snapshot {
  targets: Target[];
  /** `${book}|${chainId}|${token}` -> sum; partner books folded into PARTNER_BOOKS. */
  books: Map<string, bigint>;
  incoming: Array<Omit<InFlightAmount, 'purpose' | 'amountAtomic'> & { amount: bigint }>;
  /** `superseded`: the leg's fee-replaced transactions at its nonce; whichever is mined moved the money. */
  legs: Array<{
    sourceType: 'payment' | 'deposit' | 'vault_funding' | 'refund' | 'incident_recovery';
    sourceId: string;
    txHash: string;
    superseded: string[];
    chainId: number;
    from: string;
    to: string;
    token: string;
    amount: bigint;
  }>;
  unaddressed: Array<{ book: string; purpose: AddressPurpose; chainId: number; token: string; total: bigint }>;
}

type Leg = Snapshot['legs'][number];

/** One balance to compare: a target's on one network, in one token. */
interface Pair {
  target: Target;
  chainId: number;
  token: string;
}

const lower = (s: string) => s.toLowerCase();
const key = (...parts: Array<string | number>) => parts.join('|');

/** Every address of the service, page by page (keyset on the address); the first page also checks unaddressed books. */
export async function reconcileLedgerPage(
  deps: ReconcileDeps,
  input: { afterAddress?: string | null; limit: number },
): Promise<ReconcilePage> {
  const after = input.afterAddress ? lower(input.afterAddress) : null;
  const rows = await deps.prisma.custodyAddress.findMany({
    where: after ? { address: { gt: after } } : {},
    orderBy: { address: 'asc' },
    take: input.limit,
    select: { address: true },
  });
  const next = rows.length === input.limit ? rows[rows.length - 1]!.address : null;
  // The fixed wallets are derived, so they are checked even if their registration was missed.
  const wallets = [...walletsOf(deps.custody).keys()].filter((w) => (after === null || w > after) && (next === null || w <= next));
  const addresses = [...new Set([...rows.map((r) => r.address), ...wallets])];
  return { ...(await reconcileAddresses(deps, addresses, { unaddressedBooks: after === null })), next };
}

/** The same check for some addresses only (the workflow's second look at what differed). */
export function reconcileLedgerAddresses(deps: ReconcileDeps, addresses: string[]): Promise<ReconcileResult> {
  return reconcileAddresses(deps, [...new Set(addresses.map(lower))], { unaddressedBooks: false });
}

/** Every page, merged: what `ledger reconcile` prints. */
export async function reconcileLedger(deps: ReconcileDeps, opts: { pageSize?: number } = {}): Promise<ReconcileResult> {
  const total: ReconcileResult = { ok: true, heads: [], checked: 0, inFlight: [], differences: [] };
  let after: string | null = null;
  do {
    const page: ReconcilePage = await reconcileLedgerPage(deps, { afterAddress: after, limit: opts.pageSize ?? 200 });
    total.checked += page.checked;
    total.inFlight.push(...page.inFlight);
    total.differences.push(...page.differences);
    for (const head of page.heads) {
      const known = total.heads.find((h) => h.chainId === head.chainId);
      if (!known) total.heads.push(head);
      else if (BigInt(head.blockNumber) > BigInt(known.blockNumber)) known.blockNumber = head.blockNumber;
    }
    after = page.next;
  } while (after);
  total.ok = total.differences.length === 0;
  return total;
}

export const LEDGER_DIFFERENCE = 'ledger_difference';

/**
 * One alert per difference, named by (network, token, address or book) so the same open difference is
 * not raised again: critical when money is missing (the chain holds less than the books and money in
 * flight say), a warning when the chain holds money the books don't know.
 */
export function ledgerAlertOf(d: BooksDifference): AlertInput {
  return {
    kind: LEDGER_DIFFERENCE,
    severity: BigInt(d.differenceAtomic) < 0n ? 'critical' : 'warning',
    subject: ledgerSubject(d.chainId, d.token, d.address ? d.address : (d.book ?? 'unknown')),
    details: { ...d },
  };
}

function ledgerSubject(chainId: number, token: string, addressOrBook: string): string {
  return [chainId, lower(token), lower(addressOrBook)].join(':');
}

/**
 * Money the books say an address holds is missing from it (an open critical ledger_difference):
 * sending from it now could pay out money that is not there, so new settlement legs wait.
 */
export async function isMoneyMissingAt(prisma: PrismaClient, at: { chainId: number; token: string; address: string }): Promise<boolean> {
  const open = await prisma.operatorAlert.count({
    where: { kind: LEDGER_DIFFERENCE, severity: 'critical', resolvedAt: null, subject: ledgerSubject(at.chainId, at.token, at.address) },
  });
  return open > 0;
}

/** Makes the open ledger_difference alerts those of a complete pass (raised, refreshed, resolved). */
export function syncLedgerAlerts(deps: AlertDeps, differences: BooksDifference[]) {
  return syncAlerts(deps, LEDGER_DIFFERENCE, differences.map(ledgerAlertOf));
}

/** Lower-case address -> what it is, for the treasury and the two fee wallets. */
function walletsOf(custody: AddressBook): Map<string, { purpose: AddressPurpose; book: string | null }> {
  const out = new Map<string, { purpose: AddressPurpose; book: string | null }>();
  for (const path of SERVICE_WALLETS) {
    const address = lower(custody.deriveAddress(path));
    if (path.purpose === 'treasury') out.set(address, { purpose: 'treasury', book: null });
    else if (path.index === 0) out.set(address, { purpose: 'platform_fees', book: 'fees:platform' });
    else out.set(address, { purpose: 'partner_fees', book: PARTNER_BOOKS });
  }
  return out;
}

async function reconcileAddresses(deps: ReconcileDeps, addresses: string[], opts: { unaddressedBooks: boolean }): Promise<ReconcileResult> {
  const networks = new Map(deps.chains.networks().map((n) => [n.chainId, n]));
  const allChains = [...networks.keys()];
  const { snap, heads } = await deps.prisma.$transaction(
    async (tx) => {
      const snap = await readSnapshot(tx, deps.custody, addresses, allChains, opts);
      // Heads after the snapshot: whatever the snapshot records happened at or below them.
      const chainIds = [...new Set(snap.targets.flatMap((t) => t.chainIds))].filter((id) => networks.has(id)).sort((a, b) => a - b);
      const heads = new Map<number, bigint>();
      for (const chainId of chainIds) heads.set(chainId, await deps.chains.get(chainId).getBlockNumber());
      // Legs again after the heads (outside the snapshot): a leg is committed before it is broadcast,
      // so every leg mined at or below a head is read here, even one recorded after the snapshot.
      snap.legs = mergeLegReads(await readLegs(deps.prisma, addresses), snap.legs);
      return { snap, heads };
    },
    { isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead, timeout: 60_000 },
  );

  const targetOf = new Map(snap.targets.map((t) => [t.address, t]));
  const minedLegs = await readMinedLegs(deps, snap.legs, heads);
  const inFlight = [...incomingInFlight(snap.incoming, targetOf), ...legsInFlight(minedLegs, targetOf)];
  const pairs = pairsToCompare(snap.targets, networks, heads);
  const balances = await balancesOf(deps, pairs, heads);
  const differences = [
    ...addressDifferences(pairs, balances, snap.books, inFlightByAddress(inFlight)),
    ...unaddressedDifferences(snap.unaddressed),
  ];

  return {
    ok: differences.length === 0,
    heads: [...heads].map(([chainId, blockNumber]) => ({ chainId, blockNumber: blockNumber.toString() })),
    checked: pairs.length,
    inFlight: inFlight.map((f) => ({ ...f, address: getAddress(f.address), token: getAddress(f.token) })),
    differences,
  };
}

/** Both reads of the live legs: the later read, and the earlier legs of families it doesn't hold. */
function mergeLegReads(late: Leg[], early: Leg[]): Leg[] {
  // One entry per leg family (a fee replacement's transactions): the later read knows every member.
  const family = (l: Leg) => [l.txHash, ...l.superseded].map((h) => `${l.sourceType}|${l.sourceId}|${h}`);
  const seen = new Set(late.flatMap(family));
  return [...late, ...early.filter((l) => !family(l).some((k) => seen.has(k)))];
}

/** The money arriving that the snapshot recorded, as in flight at its address. */
function incomingInFlight(incoming: Snapshot['incoming'], targetOf: Map<string, Target>): InFlightAmount[] {
  return incoming.map(({ amount, ...i }) => ({
    ...i,
    purpose: targetOf.get(i.address)?.purpose ?? 'unknown',
    amountAtomic: amount.toString(),
  }));
}

/**
 * The legs mined successfully at or below their network's head, in the order given, each with the
 * transaction of its family that was mined. Legs of a network without a head are left out.
 */
async function readMinedLegs(deps: ReconcileDeps, legs: Leg[], heads: Map<number, bigint>): Promise<Leg[]> {
  const mined = await mapLimit(
    legs.filter((l) => heads.has(l.chainId)),
    READ_CONCURRENCY,
    async (leg) => {
      for (const txHash of [leg.txHash, ...leg.superseded]) {
        const inclusion = await deps.chains.get(leg.chainId).getTransactionInclusion(txHash as Hash);
        if (inclusion !== null) return inclusion.success && inclusion.blockNumber <= heads.get(leg.chainId)! ? { ...leg, txHash } : null;
      }
      return null;
    },
  );
  return mined.filter((leg): leg is Leg => leg !== null);
}

/** The mined legs as money in flight at the addresses of theirs that are targets: out of `from`, into `to`. */
function legsInFlight(legs: Leg[], targetOf: Map<string, Target>): InFlightAmount[] {
  const inFlight: InFlightAmount[] = [];
  for (const leg of legs) {
    // A vault's leg arrives at escrow as a Payment transfer, counted there: only its vault side is in flight.
    const sides =
      leg.sourceType === 'vault_funding'
        ? ([[leg.from, -leg.amount]] as const)
        : ([
            [leg.from, -leg.amount],
            [leg.to, leg.amount],
          ] as const);
    for (const [address, amount] of sides) {
      const target = targetOf.get(address);
      if (!target) continue; // the other side is not on this page, or not ours (a destination)
      inFlight.push({
        address,
        purpose: target.purpose,
        chainId: leg.chainId,
        token: leg.token,
        amountAtomic: amount.toString(),
        kind: 'settlement_leg',
        sourceType: leg.sourceType,
        sourceId: leg.sourceId,
        txHash: leg.txHash,
      });
    }
  }
  return inFlight;
}

/** Every (address, network, token) to compare: each target on each of its networks with a head, each asset of that network. */
function pairsToCompare(targets: Target[], networks: Map<number, TNetworkConfig>, heads: Map<number, bigint>): Pair[] {
  return targets.flatMap((t) =>
    t.chainIds
      .filter((id) => heads.has(id))
      .flatMap((chainId) => networks.get(chainId)!.assets.map((a) => ({ target: t, chainId, token: a.tokenAddress }))),
  );
}

/** `${address}|${chainId}|${token}` -> the sum of the money in flight there. */
function inFlightByAddress(inFlight: InFlightAmount[]): Map<string, bigint> {
  const flights = new Map<string, bigint>();
  for (const f of inFlight) {
    const k = key(f.address, f.chainId, lower(f.token));
    flights.set(k, (flights.get(k) ?? 0n) + BigInt(f.amountAtomic));
  }
  return flights;
}

/** The pairs whose chain balance is not their books plus the money in flight, in the pairs' order. */
function addressDifferences(pairs: Pair[], balances: bigint[], books: Snapshot['books'], flights: Map<string, bigint>): BooksDifference[] {
  const differences: BooksDifference[] = [];
  pairs.forEach(({ target, chainId, token }, i) => {
    const chainAtomic = balances[i]!;
    const ledgerAtomic = target.book === null ? 0n : (books.get(key(target.book, chainId, lower(token))) ?? 0n);
    const inFlightAtomic = flights.get(key(target.address, chainId, lower(token))) ?? 0n;
    const differenceAtomic = chainAtomic - ledgerAtomic - inFlightAtomic;
    if (differenceAtomic === 0n) return;
    differences.push({
      address: getAddress(target.address),
      purpose: target.purpose,
      book: target.book,
      chainId,
      token: getAddress(token),
      ledgerAtomic: ledgerAtomic.toString(),
      chainAtomic: chainAtomic.toString(),
      inFlightAtomic: inFlightAtomic.toString(),
      differenceAtomic: differenceAtomic.toString(),
    });
  });
  return differences;
}

/** Books of escrows, deposit addresses or vaults the service doesn't know: what they hold is missing. */
function unaddressedDifferences(unaddressed: Snapshot['unaddressed']): BooksDifference[] {
  return unaddressed.map((u) => ({
    address: null,
    purpose: u.purpose,
    book: u.book,
    chainId: u.chainId,
    token: getAddress(u.token),
    ledgerAtomic: u.total.toString(),
    chainAtomic: '0',
    inFlightAtomic: '0',
    differenceAtomic: (-u.total).toString(),
  }));
}

/** Each pair's balance at its network's head: one batched read per (network, token), in the pairs' order. */
async function balancesOf(deps: ReconcileDeps, pairs: Pair[], heads: Map<number, bigint>): Promise<bigint[]> {
  const groups = new Map<string, number[]>();
  pairs.forEach(({ chainId, token }, i) => {
    const group = groups.get(key(chainId, token)) ?? [];
    group.push(i);
    groups.set(key(chainId, token), group);
  });
  const out: bigint[] = new Array<bigint>(pairs.length);
  for (const indexes of groups.values()) {
    const { chainId, token } = pairs[indexes[0]!]!;
    const owners = indexes.map((i) => pairs[i]!.target.address as Address);
    const read = await deps.chains.get(chainId).getTokenBalances({ token: token as Address, owners, blockNumber: heads.get(chainId)! });
    indexes.forEach((pairIndex, j) => (out[pairIndex] = read[j]!));
  }
  return out;
}

/** The database's side, read in the caller's snapshot: what each address is, its books, money arriving and live legs. */
async function readSnapshot(
  tx: Prisma.TransactionClient,
  custody: AddressBook,
  addresses: string[],
  allChains: number[],
  opts: { unaddressedBooks: boolean },
): Promise<Snapshot> {
  const wallets = walletsOf(custody);
  const targets = targetsOf(addresses, allChains, wallets, await readOwners(tx, addresses));
  const books = await readBookTotals(tx, targets);
  const incoming = await readIncoming(tx, addresses);
  const unaddressed = opts.unaddressedBooks ? await readUnaddressedBooks(tx) : [];
  return { targets, books, incoming, legs: await readLegs(tx, addresses), unaddressed };
}

/** What owns each of these addresses: its custody registration, and the Payment, deposit address or vault it is for. */
interface AddressOwners {
  registry: Array<{ address: string; purpose: AddressPurpose }>;
  payments: Array<{ id: string; chainId: number; escrowAddress: string | null }>;
  depositAddresses: Array<{ id: string; chainId: number; address: string | null }>;
  vaults: Array<{ id: string; address: string | null }>;
}

async function readOwners(tx: Prisma.TransactionClient, addresses: string[]): Promise<AddressOwners> {
  const registry = await tx.custodyAddress.findMany({ where: { address: { in: addresses } }, select: { address: true, purpose: true } });
  const payments = await tx.payment.findMany({
    where: { escrowAddress: { in: addresses } },
    select: { id: true, chainId: true, escrowAddress: true },
  });
  const depositAddresses = await tx.depositAddress.findMany({
    where: { address: { in: addresses } },
    select: { id: true, chainId: true, address: true },
  });
  const vaults = await tx.vault.findMany({ where: { address: { in: addresses } }, select: { id: true, address: true } });
  return { registry, payments, depositAddresses, vaults };
}

/** What each address is, so which book it is compared with, on which networks (the table at the top). */
function targetsOf(
  addresses: string[],
  allChains: number[],
  wallets: ReturnType<typeof walletsOf>,
  { registry, payments, depositAddresses, vaults }: AddressOwners,
): Target[] {
  const purposeOf = new Map(registry.map((r) => [r.address, r.purpose]));
  const paymentOf = new Map(payments.map((p) => [p.escrowAddress!, p]));
  const depositOf = new Map(depositAddresses.map((d) => [d.address!, d]));
  const vaultOf = new Map(vaults.map((v) => [v.address!, v]));
  return addresses.map((address) => {
    const wallet = wallets.get(address);
    if (wallet) return { address, ...wallet, chainIds: allChains };
    const payment = paymentOf.get(address);
    // Every network: the address is the same on each, and a payer may send on the wrong one (held, see dust.ts).
    if (payment) return { address, purpose: 'escrow', book: `escrow:${payment.id}`, chainIds: allChains };
    const deposit = depositOf.get(address);
    if (deposit) return { address, purpose: 'deposit', book: `custody:deposit:${deposit.id}`, chainIds: [deposit.chainId] };
    const vault = vaultOf.get(address);
    if (vault) return { address, purpose: 'vault', book: `custody:vault:${vault.id}`, chainIds: allChains }; // one vault on every chain
    // Registered but owned by nothing (yet): it must hold nothing, on any network.
    return { address, purpose: purposeOf.get(address) ?? 'unknown', book: null, chainIds: allChains };
  });
}

/** The sums of the targets' books (see Snapshot.books). */
async function readBookTotals(tx: Prisma.TransactionClient, targets: Target[]): Promise<Snapshot['books']> {
  const exactBooks = targets.flatMap((t) => (t.book && t.book !== PARTNER_BOOKS ? [t.book] : []));
  // Partner books by name (one per app), so the book index is used instead of a LIKE scan.
  const partnerBooks = targets.some((t) => t.book === PARTNER_BOOKS)
    ? (await tx.app.findMany({ select: { id: true } })).map((a) => `fees:partner:${a.id}`)
    : [];
  const sums =
    exactBooks.length + partnerBooks.length === 0
      ? []
      : await tx.$queryRaw<Array<{ book: string; chain_id: number; token: string; total: string }>>`
          SELECT book, chain_id, lower(token_address) AS token, sum(amount_atomic)::text AS total FROM ledger_entries
          WHERE book = ANY(${[...exactBooks, ...partnerBooks]}::text[])
          GROUP BY book, chain_id, lower(token_address)`;
  const books = new Map<string, bigint>();
  for (const s of sums) {
    const book = s.book.startsWith('fees:partner:') ? PARTNER_BOOKS : s.book;
    const k = key(book, Number(s.chain_id), s.token);
    books.set(k, (books.get(k) ?? 0n) + BigInt(s.total));
  }
  return books;
}

/** Money arriving at these addresses that the books don't hold yet: Payment transfers, deposits, vault receipts (the rules at the top). */
async function readIncoming(tx: Prisma.TransactionClient, addresses: string[]): Promise<Snapshot['incoming']> {
  const transfers = await tx.$queryRaw<
    Array<{ payment_id: string; tx_hash: string; amount: string; address: string; chain_id: number; token: string }>
  >`
    SELECT t.payment_id, t.tx_hash, t.amount_atomic::text AS amount, p.escrow_address AS address, t.chain_id, lower(coalesce(t.token_address, p.token_address)) AS token
    FROM payment_transfers t JOIN payments p ON p.id = t.payment_id
    WHERE p.escrow_address = ANY(${addresses}::text[])
      AND (t.status IN ('pending', 'dust', 'foreign')
           OR (p.status <> ALL(${TERMINAL_PAYMENT}::text[]) AND t.status = 'confirmed' AND NOT EXISTS (
                 SELECT 1 FROM ledger_postings lp WHERE lp.source_type = 'payment' AND lp.source_id = p.id AND lp.leg = 'collection')))`;
  const deposits = await tx.$queryRaw<
    Array<{ id: string; tx_hash: string; amount: string; address: string; chain_id: number; token: string }>
  >`
    SELECT d.id, d.tx_hash, d.amount_atomic::text AS amount, a.address, d.chain_id, lower(d.token_address) AS token
    FROM deposits d JOIN deposit_addresses a ON a.id = d.deposit_address_id
    WHERE a.address = ANY(${addresses}::text[]) AND d.status IN ('detected', 'confirming')`;
  const receipts = await tx.$queryRaw<
    Array<{ vault_id: string; tx_hash: string; amount: string; address: string; chain_id: number; token: string }>
  >`
    SELECT r.vault_id, r.tx_hash, r.amount_atomic::text AS amount, v.address, r.chain_id, lower(r.token_address) AS token
    FROM vault_receipts r JOIN vaults v ON v.id = r.vault_id
    WHERE v.address = ANY(${addresses}::text[]) AND r.status = 'seen'`;
  return [
    ...transfers.map((t) => ({
      address: t.address,
      chainId: Number(t.chain_id),
      token: t.token,
      amount: BigInt(t.amount),
      kind: 'payment_transfer' as const,
      sourceType: 'payment' as const,
      sourceId: t.payment_id,
      txHash: t.tx_hash,
    })),
    ...deposits.map((d) => ({
      address: d.address,
      chainId: Number(d.chain_id),
      token: d.token,
      amount: BigInt(d.amount),
      kind: 'deposit_receipt' as const,
      sourceType: 'deposit' as const,
      sourceId: d.id,
      txHash: d.tx_hash,
    })),
    ...receipts.map((r) => ({
      address: r.address,
      chainId: Number(r.chain_id),
      token: r.token,
      amount: BigInt(r.amount),
      kind: 'vault_receipt' as const,
      sourceType: 'vault' as const,
      sourceId: r.vault_id,
      txHash: r.tx_hash,
    })),
  ];
}

/** Books of escrows, deposit addresses and vaults the service has no address for, with what they hold (not zero). */
async function readUnaddressedBooks(tx: Prisma.TransactionClient): Promise<Snapshot['unaddressed']> {
  const rows = await tx.$queryRaw<Array<{ book: string; chain_id: number; token: string; total: string }>>`
    SELECT e.book, e.chain_id, lower(e.token_address) AS token, sum(e.amount_atomic)::text AS total
    FROM ledger_entries e
    WHERE (e.book LIKE 'escrow:%'
           AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.id = substr(e.book, 8) AND p.escrow_address IS NOT NULL))
       OR (e.book LIKE 'custody:deposit:%'
           AND NOT EXISTS (SELECT 1 FROM deposit_addresses a WHERE a.id = substr(e.book, 17) AND a.address IS NOT NULL))
       OR (e.book LIKE 'custody:vault:%'
           AND NOT EXISTS (SELECT 1 FROM vaults v WHERE v.id = substr(e.book, 15) AND v.address IS NOT NULL))
    GROUP BY e.book, e.chain_id, lower(e.token_address)
    HAVING sum(e.amount_atomic) <> 0
    ORDER BY e.book, e.chain_id`;
  return rows.map((u) => ({
    book: u.book,
    purpose: u.book.startsWith('escrow:') ? 'escrow' : u.book.startsWith('custody:vault:') ? 'vault' : 'deposit',
    chainId: Number(u.chain_id),
    token: u.token,
    total: BigInt(u.total),
  }));
}

/** The live settlement legs at these addresses whose source has not posted them (see the rules at the top). */
async function readLegs(db: Pick<Prisma.TransactionClient, '$queryRaw'>, addresses: string[]): Promise<Snapshot['legs']> {
  const legs = await db.$queryRaw<
    Array<{
      source_type: 'payment' | 'deposit';
      source_id: string;
      tx_hash: string;
      chain_id: number;
      from_address: string;
      to_address: string;
      token: string;
      amount: string;
      superseded: string[];
    }>
  >`
    SELECT l.source_type, l.source_id, l.tx_hash, l.chain_id, l.from_address, l.to_address, lower(l.token_address) AS token, l.amount_atomic::text AS amount,
      ARRAY(SELECT s.tx_hash FROM settlement_legs s WHERE s.source_type = l.source_type AND s.source_id = l.source_id AND s.leg = l.leg AND s.nonce = l.nonce AND s.status = 'superseded') AS superseded
    FROM settlement_legs l
    WHERE l.status IN ('broadcast', 'confirmed')
      AND l.source_type IN ('payment', 'deposit')
      AND (l.from_address = ANY(${addresses}::text[]) OR l.to_address = ANY(${addresses}::text[]))
      AND NOT EXISTS (SELECT 1 FROM ledger_postings lp WHERE lp.source_type = l.source_type AND lp.source_id = l.source_id AND lp.leg = 'settlement')`;

  const vaultLegs = await db.$queryRaw<
    Array<{
      source_id: string;
      tx_hash: string;
      chain_id: number;
      from_address: string;
      to_address: string;
      token: string;
      amount: string;
      superseded: string[];
    }>
  >`
    SELECT l.source_id, l.tx_hash, l.chain_id, l.from_address, l.to_address, lower(l.token_address) AS token, l.amount_atomic::text AS amount,
      ARRAY(SELECT s.tx_hash FROM settlement_legs s WHERE s.source_type = l.source_type AND s.source_id = l.source_id AND s.leg = l.leg AND s.nonce = l.nonce AND s.status = 'superseded') AS superseded
    FROM settlement_legs l JOIN vault_funding_operations o ON o.id = l.source_id
    WHERE l.source_type = 'vault_funding' AND l.status IN ('broadcast', 'confirmed')
      AND l.from_address = ANY(${addresses}::text[])
      AND NOT EXISTS (SELECT 1 FROM ledger_postings lp WHERE lp.source_type = 'vault' AND lp.source_id = o.vault_id AND lp.leg = 'funding:' || o.id)`;

  // Refunds and incident recoveries (src/domain/returns): sent, not yet confirmed and posted.
  const returnLegs = await db.$queryRaw<
    Array<{
      source_type: 'refund' | 'incident_recovery';
      source_id: string;
      tx_hash: string;
      chain_id: number;
      from_address: string;
      to_address: string;
      token: string;
      amount: string;
      superseded: string[];
    }>
  >`
    SELECT l.source_type, l.source_id, l.tx_hash, l.chain_id, l.from_address, l.to_address, lower(l.token_address) AS token, l.amount_atomic::text AS amount,
      ARRAY(SELECT s.tx_hash FROM settlement_legs s WHERE s.source_type = l.source_type AND s.source_id = l.source_id AND s.leg = l.leg AND s.nonce = l.nonce AND s.status = 'superseded') AS superseded
    FROM settlement_legs l JOIN fund_returns r ON r.id = l.source_id
    WHERE l.source_type IN ('refund', 'incident_recovery') AND l.status IN ('broadcast', 'confirmed')
      AND l.from_address = ANY(${addresses}::text[])
      AND NOT EXISTS (SELECT 1 FROM ledger_postings lp WHERE lp.source_type = 'payment' AND lp.source_id = r.payment_id
                        AND lp.leg = (CASE r.kind WHEN 'refund' THEN 'refund:' ELSE 'recovery:' END) || r.id)`;

  return [
    ...legs.map((l) => ({ ...l, source_type: l.source_type as 'payment' | 'deposit' | 'vault_funding' })),
    ...vaultLegs.map((l) => ({ ...l, source_type: 'vault_funding' as const })),
    ...returnLegs,
  ].map((l) => ({
    sourceType: l.source_type,
    sourceId: l.source_id,
    txHash: l.tx_hash,
    superseded: l.superseded,
    chainId: Number(l.chain_id),
    from: l.from_address,
    to: l.to_address,
    token: l.token,
    amount: BigInt(l.amount),
  }));
}

/** Runs fn over items with at most `limit` in flight, answering results in item order. */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
