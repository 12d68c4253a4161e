import type { Prisma, PrismaClient } from '../../db/client';
import { projectBalances } from './balances';
import { isSettledBook } from './ledger';

type Db = PrismaClient | Prisma.TransactionClient;

export interface LedgerProblem {
  code:
    | 'posting_unbalanced'
    | 'posting_too_few_entries'
    | 'entry_zero_amount'
    | 'entry_without_posting'
    | 'entry_account_invalid'
    | 'upa_book_misattributed'
    | 'transaction_without_posting'
    | 'transaction_account_invalid'
    | 'transaction_invalid'
    | 'asset_inconsistent'
    | 'balance_mismatch';
  message: string;
  [detail: string]: unknown;
}

export interface LedgerCheckResult {
  ok: boolean;
  postings: number;
  entries: number;
  transactions: number;
  problems: LedgerProblem[];
}

/** At most this many problems of each kind are listed (the first ones tell the story). */
const LIMIT = 100;

/**
 * Verifies the whole ledger (what `npm run cli -- ledger check` prints): every posting has at least two
 * entries and balances per asset; no entry is zero; every entry and transaction references an existing
 * posting, and accounts that exist in the posting's app; entries on `upa:<accountId>:...` books are
 * attributed to that account; each asset is described the same way everywhere; and the balances the API
 * projects (balances.ts) equal the sums of the accounts' entries, folded here independently per book.
 * Read-only; pass a transaction client to check uncommitted writes.
 */
export async function checkLedger(db: Db): Promise<LedgerCheckResult> {
  const [counts] = await db.$queryRaw<Array<{ postings: number; entries: number; transactions: number }>>`
    SELECT (SELECT count(*) FROM ledger_postings)::int AS postings,
           (SELECT count(*) FROM ledger_entries)::int AS entries,
           (SELECT count(*) FROM ledger_transactions)::int AS transactions`;
  const problems: LedgerProblem[] = [];
  for (const check of CHECKS) problems.push(...(await check(db)));
  return {
    ok: problems.length === 0,
    postings: counts?.postings ?? 0,
    entries: counts?.entries ?? 0,
    transactions: counts?.transactions ?? 0,
    problems,
  };
}

/** One invariant: the problems it finds, at most LIMIT of them. */
type Check = (db: Db) => Promise<LedgerProblem[]>;

/** Every check, in the order their problems are listed. */
const CHECKS: Check[] = [
  unbalancedPostings,
  thinPostings,
  zeroEntries,
  entriesWithoutPosting,
  transactionsWithoutPosting,
  entriesOnForeignAccounts,
  misattributedUpaEntries,
  transactionsOnForeignAccounts,
  invalidTransactions,
  inconsistentAssets,
  balanceMismatches,
];

/** Postings whose entries don't sum to zero for some asset. */
async function unbalancedPostings(db: Db): Promise<LedgerProblem[]> {
  const rows = await db.$queryRaw<Array<{ posting_id: string; chain_id: number; token: string; total: string }>>`
    SELECT posting_id, chain_id, lower(token_address) AS token, sum(amount_atomic)::text AS total
    FROM ledger_entries GROUP BY posting_id, chain_id, lower(token_address)
    HAVING sum(amount_atomic) <> 0 ORDER BY posting_id LIMIT ${LIMIT}`;
  return rows.map((r) => ({
    code: 'posting_unbalanced',
    message: `posting ${r.posting_id}: entries for asset ${r.chain_id}:${r.token} sum to ${r.total}, not 0`,
    postingId: r.posting_id,
    chainId: Number(r.chain_id),
    tokenAddress: r.token,
    sumAtomic: r.total,
  }));
}

/** Postings with fewer than two entries. */
async function thinPostings(db: Db): Promise<LedgerProblem[]> {
  const rows = await db.$queryRaw<Array<{ id: string; n: number }>>`
    SELECT p.id, count(e.id)::int AS n FROM ledger_postings p LEFT JOIN ledger_entries e ON e.posting_id = p.id
    GROUP BY p.id HAVING count(e.id) < 2 ORDER BY p.id LIMIT ${LIMIT}`;
  return rows.map((r) => ({
    code: 'posting_too_few_entries',
    message: `posting ${r.id} has ${r.n} entries`,
    postingId: r.id,
    entries: r.n,
  }));
}

async function zeroEntries(db: Db): Promise<LedgerProblem[]> {
  const rows = await db.$queryRaw<Array<{ id: string; posting_id: string }>>`
    SELECT id, posting_id FROM ledger_entries WHERE amount_atomic = 0 ORDER BY id LIMIT ${LIMIT}`;
  return rows.map((r) => ({
    code: 'entry_zero_amount',
    message: `entry ${r.id} has a zero amount`,
    entryId: r.id,
    postingId: r.posting_id,
  }));
}

async function entriesWithoutPosting(db: Db): Promise<LedgerProblem[]> {
  const rows = await db.$queryRaw<Array<{ id: string; posting_id: string }>>`
    SELECT e.id, e.posting_id FROM ledger_entries e LEFT JOIN ledger_postings p ON p.id = e.posting_id
    WHERE p.id IS NULL ORDER BY e.id LIMIT ${LIMIT}`;
  return rows.map((r) => ({
    code: 'entry_without_posting',
    message: `entry ${r.id} references missing posting ${r.posting_id}`,
    entryId: r.id,
    postingId: r.posting_id,
  }));
}

async function transactionsWithoutPosting(db: Db): Promise<LedgerProblem[]> {
  const rows = await db.$queryRaw<Array<{ id: string; posting_id: string }>>`
    SELECT t.id, t.posting_id FROM ledger_transactions t LEFT JOIN ledger_postings p ON p.id = t.posting_id
    WHERE p.id IS NULL ORDER BY t.id LIMIT ${LIMIT}`;
  return rows.map((r) => ({
    code: 'transaction_without_posting',
    message: `transaction ${r.id} references missing posting ${r.posting_id}`,
    transactionId: r.id,
    postingId: r.posting_id,
  }));
}

/** Entries attributed to an account that doesn't exist in the posting's app. */
async function entriesOnForeignAccounts(db: Db): Promise<LedgerProblem[]> {
  const rows = await db.$queryRaw<Array<{ id: string; posting_id: string; account_id: string; app_id: string }>>`
    SELECT e.id, e.posting_id, e.account_id, p.app_id FROM ledger_entries e
    JOIN ledger_postings p ON p.id = e.posting_id LEFT JOIN accounts a ON a.id = e.account_id
    WHERE e.account_id IS NOT NULL AND (a.id IS NULL OR a.app_id <> p.app_id) ORDER BY e.id LIMIT ${LIMIT}`;
  return rows.map((r) => ({
    code: 'entry_account_invalid',
    message: `entry ${r.id} is attributed to ${r.account_id}, which is not an account of app ${r.app_id}`,
    entryId: r.id,
    postingId: r.posting_id,
    accountId: r.account_id,
  }));
}

/** Entries on a `upa:<accountId>:...` book not attributed to that account. */
async function misattributedUpaEntries(db: Db): Promise<LedgerProblem[]> {
  const rows = await db.$queryRaw<Array<{ id: string; posting_id: string; book: string; account_id: string | null }>>`
    SELECT id, posting_id, book, account_id FROM ledger_entries
    WHERE book LIKE 'upa:%' AND split_part(book, ':', 2) IS DISTINCT FROM account_id ORDER BY id LIMIT ${LIMIT}`;
  return rows.map((r) => ({
    code: 'upa_book_misattributed',
    message: `entry ${r.id} on book ${r.book} is attributed to ${r.account_id ?? 'no account'}`,
    entryId: r.id,
    postingId: r.posting_id,
    book: r.book,
    accountId: r.account_id,
  }));
}

/** Transactions whose account, sender or receiver doesn't exist in the posting's app. */
async function transactionsOnForeignAccounts(db: Db): Promise<LedgerProblem[]> {
  const rows = await db.$queryRaw<Array<{ id: string; posting_id: string; role: string; account_id: string; app_id: string }>>`
    SELECT t.id, t.posting_id, x.role, x.account_id, p.app_id FROM ledger_transactions t
    JOIN ledger_postings p ON p.id = t.posting_id
    CROSS JOIN LATERAL (VALUES ('accountId', t.account_id), ('senderAccountId', t.sender_account_id),
                               ('receiverAccountId', t.receiver_account_id)) AS x(role, account_id)
    LEFT JOIN accounts a ON a.id = x.account_id
    WHERE x.account_id IS NOT NULL AND (a.id IS NULL OR a.app_id <> p.app_id) ORDER BY t.id LIMIT ${LIMIT}`;
  return rows.map((r) => ({
    code: 'transaction_account_invalid',
    message: `transaction ${r.id}: ${r.role} ${r.account_id} is not an account of app ${r.app_id}`,
    transactionId: r.id,
    postingId: r.posting_id,
    accountId: r.account_id,
  }));
}

/** Transactions with an unknown direction or status, a non-positive amount, or the wrong side as their account. */
async function invalidTransactions(db: Db): Promise<LedgerProblem[]> {
  const rows = await db.$queryRaw<Array<{ id: string; direction: string; status: string; amount: string }>>`
    SELECT id, direction, status, amount_atomic::text AS amount FROM ledger_transactions
    WHERE direction NOT IN ('received', 'sent') OR status NOT IN ('pending', 'posted', 'reversed') OR amount_atomic <= 0
       OR (direction = 'sent' AND sender_account_id IS DISTINCT FROM account_id)
       OR (direction = 'received' AND receiver_account_id IS DISTINCT FROM account_id)
    ORDER BY id LIMIT ${LIMIT}`;
  return rows.map((r) => ({
    code: 'transaction_invalid',
    message: `transaction ${r.id} has direction ${r.direction}, status ${r.status}, amount ${r.amount}`,
    transactionId: r.id,
  }));
}

/** Assets (chain, token) described with more than one symbol or number of decimals across entries and transactions. */
async function inconsistentAssets(db: Db): Promise<LedgerProblem[]> {
  const rows = await db.$queryRaw<Array<{ chain_id: number; token: string; variants: string[] }>>`
    SELECT chain_id, lower(token_address) AS token, array_agg(DISTINCT asset_symbol || '/' || decimals) AS variants
    FROM (SELECT chain_id, token_address, asset_symbol, decimals FROM ledger_entries
          UNION SELECT chain_id, token_address, asset_symbol, decimals FROM ledger_transactions) AS a
    GROUP BY chain_id, lower(token_address) HAVING count(DISTINCT (token_address, asset_symbol, decimals)) > 1
    ORDER BY 1, 2 LIMIT ${LIMIT}`;
  return rows.map((r) => ({
    code: 'asset_inconsistent',
    message: `asset ${r.chain_id}:${r.token} is described in more than one way: ${r.variants.join(', ')}`,
    chainId: Number(r.chain_id),
    tokenAddress: r.token,
  }));
}

/** Folds the attributed entries per (account, asset, book) here and compares with the API's projection. */
async function balanceMismatches(db: Db): Promise<LedgerProblem[]> {
  const rows = await db.$queryRaw<Array<{ account_id: string; chain_id: number; token_address: string; book: string; total: string }>>`
    SELECT account_id, chain_id, token_address, book, sum(amount_atomic)::text AS total
    FROM ledger_entries WHERE account_id IS NOT NULL GROUP BY account_id, chain_id, token_address, book`;
  const expected = new Map<string, { settled: bigint; pending: bigint }>();
  for (const r of rows) {
    const key = `${r.account_id}|${Number(r.chain_id)}|${r.token_address}`;
    const sums = expected.get(key) ?? { settled: 0n, pending: 0n };
    if (isSettledBook(r.book, r.account_id)) sums.settled += BigInt(r.total);
    else sums.pending += BigInt(r.total);
    expected.set(key, sums);
  }
  const projected = await projectBalances(db);
  const problems: LedgerProblem[] = [];
  const seen = new Set<string>();
  for (const [accountId, balances] of projected) {
    for (const b of balances) {
      const key = `${accountId}|${b.asset.chainId}|${b.asset.tokenAddress}`;
      seen.add(key);
      const want = expected.get(key) ?? { settled: 0n, pending: 0n };
      const total = BigInt(b.totalAtomic);
      if (BigInt(b.settledAtomic) !== want.settled || BigInt(b.pendingAtomic) !== want.pending || total !== want.settled + want.pending) {
        problems.push({
          code: 'balance_mismatch',
          message: `account ${accountId} asset ${b.asset.chainId}:${b.asset.tokenAddress}: projected settled ${b.settledAtomic} pending ${b.pendingAtomic} total ${b.totalAtomic}, entries sum to settled ${want.settled} pending ${want.pending}`,
          accountId,
          chainId: b.asset.chainId,
          tokenAddress: b.asset.tokenAddress,
        });
      }
    }
  }
  for (const [key, want] of expected) {
    if (seen.has(key)) continue;
    const [accountId, chainId, tokenAddress] = key.split('|');
    problems.push({
      code: 'balance_mismatch',
      message: `account ${accountId} asset ${chainId}:${tokenAddress}: entries sum to settled ${want.settled} pending ${want.pending} but no balance is projected`,
      accountId,
      chainId: Number(chainId),
      tokenAddress,
    });
  }
  return problems.slice(0, LIMIT);
}
