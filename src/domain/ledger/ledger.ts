import { createHash } from 'node:crypto';
import { getAddress, isAddress } from 'viem';
import type { Prisma } from '../../db/client';
import { newId } from '../values/ids';

/**
 * The double-entry ledger: the journal behind the spec's Transactions and balances.
 *
 * A posting is one balanced group of entries, written once per (sourceType, sourceId, leg). Each entry
 * moves one book by a signed amount in atomic units, from the service's point of view: + debit (value
 * arrived in that book), - credit (value left it). The entries of a posting sum to zero per asset.
 * The UPA-facing Transactions (`txn_`) a posting carries are each one account's view of it.
 *
 * Chart of books (build names with bookFor; the kind is the first argument):
 *   external:<chainId>                  'external'        the outside world on that chain (payers, wallets,
 *                                                         banks): the contra book of money entering/leaving
 *   escrow:<paymentId>                  'escrow'          funds held in escrow for a Payment
 *   custody:deposit:<depositAddressId>  'deposit_custody' funds received at a deposit address, not yet settled
 *   custody:vault:<vaultId>             'vault_custody'   funds held at a vault address (unattributed: a vault's
 *                                                         balance is read from the chain, see vault-postings.ts)
 *   upa:<accountId>:settled             'upa_settled'     amounts paid out to the account's settlement destination
 *   fees:platform                       'platform_fees'   platform fees earned
 *   fees:partner:<appId>                'partner_fees'    partner fees earned by that app
 *   network_fees                        'network_fees'    gas and other network costs the service paid
 *   offramp:<paymentId>                 'offramp'         a bank Payment's stablecoin at the off-ramp provider,
 *                                                         not yet paid to the bank (or refunded to escrow)
 *
 * Attribution: an entry's accountId names the UPA the book belongs to. Entries on `upa:<accountId>:...`
 * books always carry that accountId (derived when omitted). Tag escrow entries with the UPA whose funds
 * are held (receive Payment: the recipient; send Payment: the sender) and deposit custody entries with the
 * deposit address's account: attributed entries are what the account's balances project
 * (see balances.ts and docs/decisions/ledger-and-money-on-chain.md `## Ledger`).
 *
 * Example, a receive Payment of 100 with 1 platform and 0.5 partner fee (USDC, 6 decimals):
 *   leg 'collection'  escrow:<pid> +100000000 (accountId R)   external:31337 -100000000
 *   leg 'settlement'  escrow:<pid> -100000000 (accountId R)   upa:R:settled +98500000
 *                     fees:platform +1000000                   fees:partner:<appId> +500000
 */

export interface LedgerAsset {
  chainId: number;
  tokenAddress: string;
  symbol: string;
  decimals: number;
}

export interface LedgerEntryInput {
  book: string;
  /** Signed: + debit, - credit. Never zero. */
  amountAtomic: bigint;
  /** The UPA this book belongs to, if any. Derived from `upa:<accountId>:...` books when omitted. */
  accountId?: string | null;
  /** Defaults to the posting's asset (a multi-asset posting must balance per asset). */
  asset?: LedgerAsset;
}

/** The spec's UPA-facing Transaction rows projected from this posting. */
export interface LedgerTransactionInput {
  accountId: string;
  direction: 'received' | 'sent';
  senderAccountId: string | null;
  receiverAccountId: string | null;
  /** Positive; direction says which way it moved. */
  amountAtomic: bigint;
  status: LedgerTransactionStatus;
  /** e.g. 'collection', 'settlement', 'fee', 'deposit', 'reversal'. */
  financialLegKind: string;
  paymentId?: string | null;
  /** Defaults to the posting's description. */
  description?: string | null;
  /** Defaults to the posting's asset. */
  asset?: LedgerAsset;
}

export interface PostingInput {
  appId: string;
  sourceType: LedgerSourceType;
  sourceId: string;
  /** Unique per source: ('payment', 'payment_x', 'collection') posts once. */
  leg: string;
  asset: LedgerAsset;
  description: string;
  /** Must sum to zero per asset; at least 2 entries; no zero amounts. */
  entries: LedgerEntryInput[];
  transactions?: LedgerTransactionInput[];
}

export const SOURCE_TYPES = ['payment', 'deposit', 'vault'] as const;
export type LedgerSourceType = (typeof SOURCE_TYPES)[number];
export const TRANSACTION_STATUSES = ['pending', 'posted', 'reversed'] as const;
export type LedgerTransactionStatus = (typeof TRANSACTION_STATUSES)[number];
export const TRANSACTION_DIRECTIONS = ['received', 'sent'] as const;

/** The largest magnitude DECIMAL(78,0) holds (exclusive). */
const MAX_ABS_ATOMIC = 10n ** 78n;

// ---------------------------------------------------------------------------------------------------
// Errors. All are business refusals: an activity should turn them into a non-retryable
// ApplicationFailure with `type` = the error's `type`.

export class LedgerError extends Error {
  constructor(
    readonly type: 'LedgerValidationError' | 'LedgerPostingConflict' | 'LedgerNotFound' | 'LedgerStatusTransitionRefused',
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = type;
  }
}

/** The input is malformed or unbalanced; nothing was written. */
export class LedgerValidationError extends LedgerError {
  constructor(readonly issues: string[]) {
    super('LedgerValidationError', `ledger posting refused: ${issues.join('; ')}`, { issues });
  }
}

/** The (sourceType, sourceId, leg) was already posted with different entries or transactions. */
export class LedgerPostingConflictError extends LedgerError {
  constructor(postingId: string, key: string) {
    super(
      'LedgerPostingConflict',
      `ledger posting ${key} already exists (${postingId}) with different entries; a replay must post identical amounts`,
      { postingId, key },
    );
  }
}

// ---------------------------------------------------------------------------------------------------
// Books

export interface BookKinds {
  external: [chainId: number];
  escrow: [paymentId: string];
  deposit_custody: [depositAddressId: string];
  vault_custody: [vaultId: string];
  upa_settled: [accountId: string];
  platform_fees: [];
  partner_fees: [appId: string];
  network_fees: [];
  offramp: [paymentId: string];
}
export type BookKind = keyof BookKinds;

/** The book name for one place in the chart of books, e.g. bookFor('escrow', paymentId). */
export function bookFor<K extends BookKind>(kind: K, ...args: BookKinds[K]): string {
  const [id] = args as unknown as [string | number | undefined];
  const part = (name: string) => {
    const value = String(id ?? '');
    if (!BOOK_PART.test(value)) throw new LedgerValidationError([`bookFor('${kind}'): invalid ${name} ${JSON.stringify(id)}`]);
    return value;
  };
  switch (kind) {
    case 'external':
      return `external:${part('chainId')}`;
    case 'escrow':
      return `escrow:${part('paymentId')}`;
    case 'deposit_custody':
      return `custody:deposit:${part('depositAddressId')}`;
    case 'vault_custody':
      return `custody:vault:${part('vaultId')}`;
    case 'upa_settled':
      return `upa:${part('accountId')}:settled`;
    case 'platform_fees':
      return 'fees:platform';
    case 'partner_fees':
      return `fees:partner:${part('appId')}`;
    case 'network_fees':
      return 'network_fees';
    case 'offramp':
      return `offramp:${part('paymentId')}`;
    default:
      throw new LedgerValidationError([`bookFor: unknown book kind ${String(kind)}`]);
  }
}

const BOOK_PART = /^[A-Za-z0-9_.-]+$/;
const BOOK_NAME = /^[a-z_]+(:[A-Za-z0-9_.-]+)*$/;
const UPA_BOOK = /^upa:(acct_[A-Za-z0-9_-]+):([a-z_]+)$/;

/** The account a `upa:<accountId>:<sub>` book belongs to, or null for any other book. */
export function accountOfBook(book: string): string | null {
  return UPA_BOOK.exec(book)?.[1] ?? null;
}

/** True for the book holding what was paid out to the account's settlement destination. */
export function isSettledBook(book: string, accountId: string): boolean {
  return book === `upa:${accountId}:settled`;
}

// ---------------------------------------------------------------------------------------------------
// Validation (pure)

export interface PreparedEntry {
  line: number;
  book: string;
  accountId: string | null;
  asset: LedgerAsset;
  amountAtomic: bigint;
}

export interface PreparedTransaction extends Omit<LedgerTransactionInput, 'asset' | 'paymentId' | 'description'> {
  asset: LedgerAsset;
  paymentId: string | null;
  description: string | null;
}

export interface PreparedPosting {
  key: string;
  appId: string;
  sourceType: LedgerSourceType;
  sourceId: string;
  leg: string;
  description: string;
  entries: PreparedEntry[];
  transactions: PreparedTransaction[];
  /** Every account the posting references (entries, transactions, senders, receivers). */
  accountIds: string[];
  fingerprint: string;
}

const assetKey = (a: LedgerAsset) => `${a.chainId}:${a.tokenAddress.toLowerCase()}`;

function normalizeAsset(asset: LedgerAsset | undefined, where: string, issues: string[]): LedgerAsset | null {
  if (!asset || typeof asset !== 'object') {
    issues.push(`${where}: asset is required`);
    return null;
  }
  const before = issues.length;
  if (!Number.isSafeInteger(asset.chainId) || asset.chainId <= 0) issues.push(`${where}: asset.chainId must be a positive integer`);
  if (typeof asset.tokenAddress !== 'string' || !isAddress(asset.tokenAddress, { strict: false })) {
    issues.push(`${where}: asset.tokenAddress must be a 20-byte 0x address`);
  }
  if (typeof asset.symbol !== 'string' || asset.symbol.length < 1 || asset.symbol.length > 32) {
    issues.push(`${where}: asset.symbol must be 1-32 characters`);
  }
  if (!Number.isInteger(asset.decimals) || asset.decimals < 0 || asset.decimals > 36) issues.push(`${where}: asset.decimals must be 0-36`);
  if (issues.length > before) return null;
  return { chainId: asset.chainId, tokenAddress: getAddress(asset.tokenAddress), symbol: asset.symbol, decimals: asset.decimals };
}

const isId = (v: unknown): v is string => typeof v === 'string' && /^[A-Za-z0-9_-]{1,128}$/.test(v);
const isAccountId = (v: unknown): v is string => typeof v === 'string' && /^acct_[A-Za-z0-9_-]{1,64}$/.test(v);

/**
 * Checks a posting and puts it in the form that is stored. Throws LedgerValidationError naming every
 * problem (unbalanced assets, zero amounts, malformed books, inconsistent attribution...). Pure.
 */
export function preparePosting(input: PostingInput): PreparedPosting {
  const issues: string[] = [];
  checkPostingFields(input, issues);
  const asset = normalizeAsset(input.asset, 'posting', issues);
  const entries = prepareEntries(input.entries, asset, issues);
  const transactions: PreparedTransaction[] = [];
  (input.transactions ?? []).forEach((t, i) => {
    const prepared = prepareTransaction(t, `transactions[${i}]`, asset, input.description, issues);
    if (prepared) transactions.push(prepared);
  });

  if (issues.length > 0) throw new LedgerValidationError(issues);

  return {
    key: `${input.sourceType}/${input.sourceId}/${input.leg}`,
    appId: input.appId,
    sourceType: input.sourceType,
    sourceId: input.sourceId,
    leg: input.leg,
    description: input.description,
    entries,
    transactions,
    accountIds: accountIdsOf(entries, transactions),
    fingerprint: fingerprintOf(input.appId, entries, transactions),
  };
}

/** The posting's own fields: app, source, leg and description. */
function checkPostingFields(input: PostingInput, issues: string[]): void {
  if (!isId(input.appId)) issues.push('appId is required');
  if (!SOURCE_TYPES.includes(input.sourceType)) issues.push(`sourceType must be one of ${SOURCE_TYPES.join(', ')}`);
  if (!isId(input.sourceId)) issues.push('sourceId must be 1-128 characters of [A-Za-z0-9_-]');
  if (typeof input.leg !== 'string' || !/^[A-Za-z0-9_.:-]{1,128}$/.test(input.leg))
    issues.push('leg must be 1-128 characters of [A-Za-z0-9_.:-]');
  if (typeof input.description !== 'string' || input.description.length < 1 || input.description.length > 500) {
    issues.push('description must be 1-500 characters');
  }
}

/**
 * The entries in stored form (an entry without a usable amount or asset is left out, its issue noted),
 * each asset described one way, and balanced: the entries of each asset sum to zero.
 */
function prepareEntries(input: LedgerEntryInput[], asset: LedgerAsset | null, issues: string[]): PreparedEntry[] {
  const entriesIn = Array.isArray(input) ? input : [];
  if (entriesIn.length < 2) issues.push(`a posting needs at least 2 entries, got ${entriesIn.length}`);
  if (entriesIn.length > 100) issues.push('a posting has at most 100 entries');

  const entries: PreparedEntry[] = [];
  const assets = new Map<string, LedgerAsset>();
  const sums = new Map<string, bigint>();
  entriesIn.forEach((e, i) => {
    const where = `entries[${i}]`;
    const entryAsset = e.asset === undefined ? asset : normalizeAsset(e.asset, where, issues);
    const accountId = attributedAccount(e, where, issues);
    if (typeof e.amountAtomic !== 'bigint') {
      issues.push(`${where}: amountAtomic must be a bigint`);
      return;
    }
    if (e.amountAtomic === 0n) issues.push(`${where}: amountAtomic must not be zero`);
    if (e.amountAtomic >= MAX_ABS_ATOMIC || -e.amountAtomic >= MAX_ABS_ATOMIC) issues.push(`${where}: amountAtomic exceeds 78 digits`);
    if (!entryAsset) return;
    const key = assetKey(entryAsset);
    const known = assets.get(key);
    if (known && (known.symbol !== entryAsset.symbol || known.decimals !== entryAsset.decimals)) {
      issues.push(`${where}: asset ${key} is described as ${known.symbol}/${known.decimals} elsewhere in the posting`);
    }
    assets.set(key, known ?? entryAsset);
    sums.set(key, (sums.get(key) ?? 0n) + e.amountAtomic);
    entries.push({ line: i + 1, book: e.book, accountId, asset: known ?? entryAsset, amountAtomic: e.amountAtomic });
  });
  for (const [key, sum] of sums) {
    if (sum !== 0n) issues.push(`entries for asset ${key} sum to ${sum}, not 0 (unbalanced)`);
  }
  return entries;
}

/**
 * Checks an entry's book and answers the account the entry is attributed to: the owner of a
 * `upa:<accountId>:...` book (which a different accountId contradicts), else the accountId given, if any.
 */
function attributedAccount(e: LedgerEntryInput, where: string, issues: string[]): string | null {
  if (typeof e.book !== 'string' || e.book.length > 200 || !BOOK_NAME.test(e.book)) {
    issues.push(`${where}: book ${JSON.stringify(e.book)} is not a book name (see the chart of books)`);
  }
  let accountId = e.accountId ?? null;
  const owner = typeof e.book === 'string' && e.book.startsWith('upa:') ? accountOfBook(e.book) : null;
  if (typeof e.book === 'string' && e.book.startsWith('upa:') && !owner) {
    issues.push(`${where}: book ${e.book} must look like upa:<accountId>:<name>`);
  }
  if (owner) {
    if (accountId !== null && accountId !== owner) issues.push(`${where}: book ${e.book} belongs to ${owner}, not ${accountId}`);
    accountId = owner;
  }
  if (accountId !== null && !isAccountId(accountId)) issues.push(`${where}: accountId must be an account id (acct_...)`);
  return accountId;
}

/** One Transaction in stored form, or null when its asset is unusable (the issue is noted). */
function prepareTransaction(
  t: LedgerTransactionInput,
  where: string,
  asset: LedgerAsset | null,
  postingDescription: string,
  issues: string[],
): PreparedTransaction | null {
  const txAsset = t.asset === undefined ? asset : normalizeAsset(t.asset, where, issues);
  if (!isAccountId(t.accountId)) issues.push(`${where}: accountId must be an account id (acct_...)`);
  if (!TRANSACTION_DIRECTIONS.includes(t.direction)) issues.push(`${where}: direction must be received or sent`);
  if (!TRANSACTION_STATUSES.includes(t.status)) issues.push(`${where}: status must be one of ${TRANSACTION_STATUSES.join(', ')}`);
  for (const side of ['senderAccountId', 'receiverAccountId'] as const) {
    if (t[side] !== null && t[side] !== undefined && !isAccountId(t[side])) issues.push(`${where}: ${side} must be an account id or null`);
  }
  if (t.direction === 'sent' && t.senderAccountId !== t.accountId)
    issues.push(`${where}: a sent transaction's senderAccountId is its accountId`);
  if (t.direction === 'received' && t.receiverAccountId !== t.accountId) {
    issues.push(`${where}: a received transaction's receiverAccountId is its accountId`);
  }
  if (typeof t.amountAtomic !== 'bigint' || t.amountAtomic <= 0n || t.amountAtomic >= MAX_ABS_ATOMIC) {
    issues.push(`${where}: amountAtomic must be a positive bigint of at most 78 digits`);
  }
  if (typeof t.financialLegKind !== 'string' || !/^[a-z_]{1,64}$/.test(t.financialLegKind)) {
    issues.push(`${where}: financialLegKind must be 1-64 characters of [a-z_]`);
  }
  if (t.paymentId != null && !/^payment_[A-Za-z0-9_-]+$/.test(t.paymentId)) issues.push(`${where}: paymentId must be a payment id`);
  if (t.description != null && (typeof t.description !== 'string' || t.description.length > 500)) {
    issues.push(`${where}: description must be at most 500 characters`);
  }
  if (!txAsset) return null;
  return {
    accountId: t.accountId,
    direction: t.direction,
    senderAccountId: t.senderAccountId ?? null,
    receiverAccountId: t.receiverAccountId ?? null,
    amountAtomic: t.amountAtomic,
    status: t.status,
    financialLegKind: t.financialLegKind,
    paymentId: t.paymentId ?? null,
    description: t.description ?? postingDescription,
    asset: txAsset,
  };
}

/** Every account the posting references (entries, transactions, senders, receivers), sorted. */
function accountIdsOf(entries: PreparedEntry[], transactions: PreparedTransaction[]): string[] {
  const accountIds = new Set<string>();
  for (const e of entries) if (e.accountId) accountIds.add(e.accountId);
  for (const t of transactions) {
    for (const id of [t.accountId, t.senderAccountId, t.receiverAccountId]) if (id) accountIds.add(id);
  }
  return [...accountIds].sort();
}

/**
 * The hash a replay must match: the app, the entries line by line and the Transactions as a set (not
 * their statuses or descriptions).
 */
function fingerprintOf(appId: string, entries: PreparedEntry[], transactions: PreparedTransaction[]): string {
  const canonical = JSON.stringify({
    appId,
    entries: entries.map((e) => [e.line, e.book, e.accountId, assetKey(e.asset), e.asset.symbol, e.asset.decimals, String(e.amountAtomic)]),
    transactions: transactions
      .map((t) =>
        JSON.stringify([
          t.accountId,
          t.direction,
          t.senderAccountId,
          t.receiverAccountId,
          assetKey(t.asset),
          String(t.amountAtomic),
          t.financialLegKind,
          t.paymentId,
        ]),
      )
      .sort(),
  });
  return createHash('sha256').update(canonical).digest('hex');
}

// ---------------------------------------------------------------------------------------------------
// Writing

/**
 * Posts a balanced group of entries, and the Transactions it carries, inside the caller's transaction.
 *
 * Idempotent: (sourceType, sourceId, leg) is unique, so a retry or a replay posts once and answers the
 * first posting's id with created=false. The claim is an INSERT ... ON CONFLICT DO NOTHING
 * (createMany skipDuplicates), which never fails a statement and so never aborts the caller's
 * PostgreSQL transaction; a concurrent poster of the same key waits on the unique index until the first
 * commits (then reads its posting) or rolls back (then posts itself). A replay whose entries or
 * transactions differ from the stored posting throws LedgerPostingConflictError.
 *
 * Refusals (nothing written): LedgerValidationError for unbalanced or malformed input, or an account
 * that is unknown or belongs to another app.
 */
export async function postToLedger(tx: Prisma.TransactionClient, input: PostingInput): Promise<{ postingId: string; created: boolean }> {
  const p = preparePosting(input);

  if (p.accountIds.length > 0) {
    const found = await tx.account.findMany({ where: { id: { in: p.accountIds } }, select: { id: true, appId: true } });
    const ok = new Set(found.filter((a) => a.appId === p.appId).map((a) => a.id));
    const foreign = p.accountIds.filter((id) => !ok.has(id));
    if (foreign.length > 0) throw new LedgerValidationError(foreign.map((id) => `account ${id} does not exist in app ${p.appId}`));
  }

  const postingId = newId('ledgerPosting');
  const createdAt = new Date();
  await tx.ledgerPosting.createMany({
    data: [
      {
        id: postingId,
        appId: p.appId,
        sourceType: p.sourceType,
        sourceId: p.sourceId,
        leg: p.leg,
        description: p.description,
        fingerprint: p.fingerprint,
        createdAt,
      },
    ],
    skipDuplicates: true,
  });
  const stored = await tx.ledgerPosting.findUniqueOrThrow({
    where: { sourceType_sourceId_leg: { sourceType: p.sourceType, sourceId: p.sourceId, leg: p.leg } },
    select: { id: true, fingerprint: true, appId: true },
  });
  if (stored.id !== postingId) {
    if (stored.fingerprint !== p.fingerprint || stored.appId !== p.appId) throw new LedgerPostingConflictError(stored.id, p.key);
    return { postingId: stored.id, created: false };
  }

  await tx.ledgerEntry.createMany({
    data: p.entries.map((e) => ({
      id: newId('ledgerEntry'),
      postingId,
      line: e.line,
      book: e.book,
      accountId: e.accountId,
      chainId: e.asset.chainId,
      tokenAddress: e.asset.tokenAddress,
      assetSymbol: e.asset.symbol,
      decimals: e.asset.decimals,
      amountAtomic: e.amountAtomic.toString(),
      createdAt,
    })),
  });
  if (p.transactions.length > 0) {
    await tx.ledgerTransaction.createMany({
      data: p.transactions.map((t) => ({
        id: newId('transaction'),
        postingId,
        accountId: t.accountId,
        direction: t.direction,
        senderAccountId: t.senderAccountId,
        receiverAccountId: t.receiverAccountId,
        chainId: t.asset.chainId,
        tokenAddress: t.asset.tokenAddress,
        assetSymbol: t.asset.symbol,
        decimals: t.asset.decimals,
        amountAtomic: t.amountAtomic.toString(),
        status: t.status,
        financialLegKind: t.financialLegKind,
        paymentId: t.paymentId,
        description: t.description,
        createdAt,
        updatedAt: createdAt,
      })),
    });
  }
  return { postingId, created: true };
}

/** Which statuses may move to each status (a repeat of the current status is a no-op). */
const ALLOWED_FROM: Record<LedgerTransactionStatus, LedgerTransactionStatus[]> = {
  pending: [],
  posted: ['pending'],
  reversed: ['pending', 'posted'],
};

/**
 * Moves the Transactions of one posting to `status` (e.g. pending -> posted when a settlement confirms,
 * or -> reversed), optionally only the one of `accountId`. Idempotent: Transactions already in `status`
 * are left alone. The update is conditional on the current status, so of two racing changes the loser
 * re-checks and is refused cleanly. Throws LedgerError 'LedgerNotFound' when the posting or its
 * Transactions don't exist, 'LedgerStatusTransitionRefused' for a move the lifecycle forbids
 * (anything out of reversed, posted -> pending).
 */
export async function updateTransactionStatus(
  tx: Prisma.TransactionClient,
  input: { sourceType: LedgerSourceType; sourceId: string; leg: string; status: LedgerTransactionStatus; accountId?: string },
): Promise<void> {
  const key = `${input.sourceType}/${input.sourceId}/${input.leg}`;
  if (!TRANSACTION_STATUSES.includes(input.status))
    throw new LedgerValidationError([`status must be one of ${TRANSACTION_STATUSES.join(', ')}`]);
  const posting = await tx.ledgerPosting.findUnique({
    where: { sourceType_sourceId_leg: { sourceType: input.sourceType, sourceId: input.sourceId, leg: input.leg } },
    select: { id: true },
  });
  if (!posting) throw new LedgerError('LedgerNotFound', `no ledger posting ${key}`, { key });
  const scope = { postingId: posting.id, ...(input.accountId ? { accountId: input.accountId } : {}) };
  await tx.ledgerTransaction.updateMany({
    where: { ...scope, status: { in: ALLOWED_FROM[input.status] } },
    data: { status: input.status, updatedAt: new Date() },
  });
  const rows = await tx.ledgerTransaction.findMany({ where: scope, select: { id: true, status: true } });
  if (rows.length === 0) {
    throw new LedgerError(
      'LedgerNotFound',
      `ledger posting ${key} has no transactions${input.accountId ? ` for ${input.accountId}` : ''}`,
      { key },
    );
  }
  const refused = rows.filter((r) => r.status !== input.status);
  if (refused.length > 0) {
    throw new LedgerError(
      'LedgerStatusTransitionRefused',
      `transaction ${refused[0]!.id} of ${key} cannot move from ${refused[0]!.status} to ${input.status}`,
      { key, transactions: refused.map((r) => ({ id: r.id, status: r.status })), status: input.status },
    );
  }
}
