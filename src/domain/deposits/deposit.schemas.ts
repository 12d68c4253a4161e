import { z } from 'zod';
import { ZAssetSymbol } from '../values/environment-values';
import { ZFinality } from '../chain/finality.schemas';
import { ZCursor } from '../requests/pagination';
import { DEPOSIT_STATUSES } from './pure/deposit-machine';
import { ZChainId, zInt4Param } from '../../platform/int4';

export const ZDepositAddressId = z
  .string()
  .regex(/^deposit_addr_[A-Za-z0-9_-]+$/, 'a deposit address id (deposit_addr_...)')
  .max(64);
export const ZDepositId = z
  .string()
  .regex(/^deposit_(?!addr_)[A-Za-z0-9_-]+$/, 'a deposit id (deposit_...)')
  .max(64);

// ---- requests ----
export const ZCreateDepositAddress = z.strictObject({
  chainId: ZChainId,
  /** Defaults to the network's defaultAsset. */
  assetSymbol: ZAssetSymbol.optional(),
  /** false (default): answer the account's existing address for this network and asset, if any. */
  newAddress: z.boolean().default(false),
});
export type TCreateDepositAddress = z.output<typeof ZCreateDepositAddress>;

export const ZListDepositAddressesQuery = z.strictObject({
  chainId: zInt4Param({ min: 1 }).optional(),
  assetSymbol: z.string().min(1).max(16).optional(),
  limit: zInt4Param({ min: 1, max: 100 }).default(50),
  cursor: ZCursor.optional(),
});
export type TListDepositAddressesQuery = z.output<typeof ZListDepositAddressesQuery>;

export const ZListDepositsQuery = z.strictObject({
  status: z.enum(DEPOSIT_STATUSES).optional(),
  limit: zInt4Param({ min: 1, max: 100 }).default(50),
  cursor: ZCursor.optional(),
});
export type TListDepositsQuery = z.output<typeof ZListDepositsQuery>;

// ---- responses ----
const ZDateTime = z.iso.datetime();

export const ZDepositAddress = z.strictObject({
  id: ZDepositAddressId,
  accountId: z.string(),
  address: z.string(),
  chainId: z.number().int(),
  networkCode: z.string(),
  assetSymbol: z.string(),
  tokenAddress: z.string(),
  decimals: z.number().int(),
  status: z.literal('active'),
  createdAt: ZDateTime,
  updatedAt: ZDateTime,
});
export type TDepositAddress = z.infer<typeof ZDepositAddress>;

/** The spec's Asset amount: {asset {chainId, tokenAddress, symbol, decimals, kind}, amount (atomic)}. */
export const ZAsset = z.strictObject({
  chainId: z.number().int(),
  tokenAddress: z.string(),
  symbol: z.string(),
  decimals: z.number().int(),
  kind: z.literal('token'),
});
export const ZAssetAmount = z.strictObject({ asset: ZAsset, amount: z.string().regex(/^\d+$/) });

const ZAtomic = z.string().regex(/^\d+$/);

/** The spec's Deposit fields, and finality (additive). */
export const ZDeposit = z.strictObject({
  id: ZDepositId,
  accountId: z.string(),
  depositAddressId: ZDepositAddressId,
  status: z.enum(DEPOSIT_STATUSES),
  amount: ZAssetAmount,
  sourceTransfer: z.strictObject({
    amount: ZAtomic,
    txHash: z.string().nullable(),
    logIndex: z.number().int().nullable(),
    fromAddress: z.string().nullable(),
  }),
  fees: z.strictObject({
    partnerAmountAtomic: ZAtomic,
    platformAmountAtomic: ZAtomic,
    networkAmountAtomic: ZAtomic,
    setupAmountAtomic: ZAtomic,
    denomination: ZAsset,
    basis: z.literal('source_amount'),
    actualReceivedAmountAtomic: ZAtomic.nullable(),
  }),
  settlement: z.strictObject({
    status: z.enum(['pending', 'broadcast', 'confirmed', 'requires_intervention', 'not_required', 'cancelled', 'reversed']),
    txHash: z.string().nullable(),
    settledAt: ZDateTime.nullable(),
    reasonCode: z.string().nullable(),
  }),
  settlementProfileSnapshot: z.record(z.string(), z.unknown()),
  txHash: z.string(),
  /** Where its money stands on chain: its source transfer and each settlement leg (docs/api-guide.md, "Live finality"). */
  finality: ZFinality,
});
export type TDeposit = z.infer<typeof ZDeposit>;

export const ZDepositAddressResponse = z.strictObject({ depositAddress: ZDepositAddress });
export const ZDepositResponse = z.strictObject({ deposit: ZDeposit });
export const ZDepositList = z.strictObject({ accountId: z.string(), deposits: z.array(ZDeposit), nextCursor: z.string().nullable() });
export const ZDepositAddressList = z.strictObject({
  accountId: z.string(),
  depositAddresses: z.array(ZDepositAddress),
  nextCursor: z.string().nullable(),
});
