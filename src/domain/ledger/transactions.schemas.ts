import { z } from 'zod';
import { ZAccountId } from '../accounts/account.schemas';
import { ZPageQuery } from '../requests/pagination';
import { TRANSACTION_DIRECTIONS, TRANSACTION_STATUSES } from './ledger';

/** An integer string in the asset's smallest unit. */
export const ZAtomic = z.string().regex(/^\d+$/, 'an unsigned integer string');
export const ZSignedAtomic = z.string().regex(/^-?\d+$/, 'an integer string');

/** The spec's asset amount (deposits, transactions). */
export const ZLedgerAssetView = z.strictObject({
  chainId: z.number().int().positive(),
  tokenAddress: z.string(),
  symbol: z.string(),
  decimals: z.number().int().min(0),
  kind: z.literal('token'),
});
export const ZAssetAmount = z.strictObject({ asset: ZLedgerAssetView, amount: ZAtomic });
export type TAssetAmount = z.output<typeof ZAssetAmount>;

export const ZTransactionId = z
  .string()
  .regex(/^txn_[A-Za-z0-9_-]+$/, 'a transaction id (txn_...)')
  .max(64);

export const ZTransaction = z.strictObject({
  id: ZTransactionId,
  accountId: ZAccountId,
  senderAccountId: ZAccountId.nullable(),
  receiverAccountId: ZAccountId.nullable(),
  direction: z.enum(TRANSACTION_DIRECTIONS),
  status: z.enum(TRANSACTION_STATUSES),
  amount: ZAssetAmount,
  description: z.string().nullable(),
  sourceType: z.string(),
  sourceId: z.string(),
  paymentId: z.string().nullable(),
  financialLegKind: z.string(),
});
export type TTransaction = z.output<typeof ZTransaction>;

export const ZLedgerEntryView = z.strictObject({
  id: z.string().regex(/^entry_/),
  direction: z.enum(['debit', 'credit']),
  /** Unsigned; direction gives the sign. */
  amount: ZAssetAmount,
  createdAt: z.iso.datetime(),
});
export type TLedgerEntryView = z.output<typeof ZLedgerEntryView>;

/** GET /v2/accounts/{accountId}/transactions/{transactionId} */
export const ZGetTransactionPath = z.object({ accountId: ZAccountId, transactionId: ZTransactionId });
export const ZTransactionDetail = z.strictObject({
  accountId: ZAccountId,
  transaction: ZTransaction,
  ledgerEntries: z.array(ZLedgerEntryView),
});
export type TTransactionDetail = z.output<typeof ZTransactionDetail>;

/** GET /v2/accounts/{accountId}/transactions */
export const ZListTransactionsQuery = ZPageQuery({ max: 100, default: 50 }).extend({
  paymentId: z
    .string()
    .regex(/^payment_[A-Za-z0-9_-]+$/, 'a payment id (payment_...)')
    .max(64)
    .optional(),
  status: z.enum(TRANSACTION_STATUSES).optional(),
});
export type TListTransactionsQuery = z.output<typeof ZListTransactionsQuery>;
export const ZTransactionList = z.strictObject({
  accountId: ZAccountId,
  transactions: z.array(ZTransaction),
  nextCursor: z.string().nullable(),
});
export type TTransactionList = z.output<typeof ZTransactionList>;
