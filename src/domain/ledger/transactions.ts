import type { Prisma, PrismaClient } from '../../db/client';
import { notFound } from '../requests/errors';
import { afterPosition, pageOf, type CursorCodec } from '../requests/pagination';
import type {
  TAssetAmount,
  TLedgerEntryView,
  TListTransactionsQuery,
  TTransaction,
  TTransactionDetail,
  TTransactionList,
} from './transactions.schemas';

type Db = PrismaClient | Prisma.TransactionClient;

/** Reading a Decimal(78,0) column: its plain integer digits, never an exponent form. */
export function decimalToBigInt(value: Prisma.Decimal | string | number | bigint): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return BigInt(value);
  return BigInt(typeof value === 'string' ? value : value.toFixed(0));
}

export function assetAmount(
  row: { chainId: number; tokenAddress: string; assetSymbol: string; decimals: number },
  amount: bigint,
): TAssetAmount {
  return {
    asset: { chainId: row.chainId, tokenAddress: row.tokenAddress, symbol: row.assetSymbol, decimals: row.decimals, kind: 'token' },
    amount: amount.toString(),
  };
}

const TRANSACTION_SELECT = {
  id: true,
  postingId: true,
  accountId: true,
  senderAccountId: true,
  receiverAccountId: true,
  direction: true,
  status: true,
  chainId: true,
  tokenAddress: true,
  assetSymbol: true,
  decimals: true,
  amountAtomic: true,
  description: true,
  paymentId: true,
  financialLegKind: true,
  createdAt: true,
  posting: { select: { sourceType: true, sourceId: true } },
} as const satisfies Prisma.LedgerTransactionSelect;

type TransactionRow = Prisma.LedgerTransactionGetPayload<{ select: typeof TRANSACTION_SELECT }>;

export function toTransaction(row: TransactionRow): TTransaction {
  return {
    id: row.id,
    accountId: row.accountId,
    senderAccountId: row.senderAccountId,
    receiverAccountId: row.receiverAccountId,
    direction: row.direction as TTransaction['direction'],
    status: row.status as TTransaction['status'],
    amount: assetAmount(row, decimalToBigInt(row.amountAtomic)),
    description: row.description,
    sourceType: row.posting.sourceType,
    sourceId: row.posting.sourceId,
    paymentId: row.paymentId,
    financialLegKind: row.financialLegKind,
  };
}

/** Another app's account (or an unknown one) is 404, so ids can't be probed. */
async function assertAccountOfApp(db: Db, appId: string, accountId: string): Promise<void> {
  const account = await db.account.findFirst({ where: { id: accountId, appId }, select: { id: true } });
  if (!account) throw notFound('Account');
}

/**
 * One Transaction with the ledger entries behind it. ledgerEntries are the entries of the Transaction's
 * posting attributed to this account (its books); when the posting touches none of the account's books
 * (e.g. a collection into an escrow not attributed to it), every entry of the posting is shown instead,
 * so a Transaction always shows the balanced journal lines behind it. Ordered as posted.
 */
export async function getAccountTransaction(db: Db, appId: string, accountId: string, transactionId: string): Promise<TTransactionDetail> {
  await assertAccountOfApp(db, appId, accountId);
  const row = await db.ledgerTransaction.findFirst({ where: { id: transactionId, accountId }, select: TRANSACTION_SELECT });
  if (!row) throw notFound('Transaction');
  const entries = await db.ledgerEntry.findMany({ where: { postingId: row.postingId }, orderBy: { line: 'asc' } });
  const own = entries.filter((e) => e.accountId === accountId);
  const shown = own.length > 0 ? own : entries;
  const ledgerEntries: TLedgerEntryView[] = shown.map((e) => {
    const amount = decimalToBigInt(e.amountAtomic);
    return {
      id: e.id,
      direction: amount > 0n ? 'debit' : 'credit',
      amount: assetAmount(e, amount < 0n ? -amount : amount),
      createdAt: e.createdAt.toISOString(),
    };
  });
  return { accountId, transaction: toTransaction(row), ledgerEntries };
}

/** The account's Transactions, newest first, with optional paymentId and status filters. */
export async function listAccountTransactions(
  db: Db,
  cursors: CursorCodec,
  appId: string,
  accountId: string,
  query: TListTransactionsQuery,
): Promise<TTransactionList> {
  await assertAccountOfApp(db, appId, accountId);
  // The cursor is bound to this account and these filters: reusing it elsewhere is a 400.
  const scope = `transactions:${accountId}:${query.paymentId ?? ''}:${query.status ?? ''}`;
  const position = query.cursor ? cursors.decode(scope, query.cursor) : undefined;
  const rows = await db.ledgerTransaction.findMany({
    where: {
      accountId,
      ...(query.paymentId ? { paymentId: query.paymentId } : {}),
      ...(query.status ? { status: query.status } : {}),
      ...afterPosition(position),
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: query.limit + 1,
    select: TRANSACTION_SELECT,
  });
  const page = pageOf(rows, query.limit, cursors, scope);
  return { accountId, transactions: page.items.map(toTransaction), nextCursor: page.nextCursor };
}
