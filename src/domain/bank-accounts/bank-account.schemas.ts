import { z } from 'zod';
import { ZCursor } from '../requests/pagination';
import { zInt4Param } from '../../platform/int4';
import { BANK_COUNTRIES } from '../../config/environments';
import { BANK_ACCOUNT_STATUSES } from './bank-account-machine';

export const ZBankAccountId = z.string().regex(/^bank_account_[A-Za-z0-9]{1,64}$/, 'a bank account id');

export const ZListBankAccountsQuery = z.strictObject({
  status: z.enum(BANK_ACCOUNT_STATUSES).optional(),
  limit: zInt4Param({ min: 1, max: 100 }).default(50),
  cursor: ZCursor.optional(),
});
export type TListBankAccountsQuery = z.output<typeof ZListBankAccountsQuery>;

export const ZDirectoryQuery = z.strictObject({ country: z.enum(BANK_COUNTRIES) });

// ---- responses ----
const ZDateTime = z.iso.datetime();

/** The spec's "Linked bank account": the full account number is never in it. */
export const ZBankAccount = z.strictObject({
  id: z.string(),
  accountId: z.string(),
  accountHolderName: z.string(),
  country: z.string(),
  currency: z.string(),
  bankName: z.string(),
  bankCode: z.string(),
  accountNumberLast4: z.string().regex(/^[0-9]{4}$/),
  rail: z.string(),
  status: z.enum(BANK_ACCOUNT_STATUSES),
  verification: z.strictObject({ version: z.number().int().min(1), verifiedAt: ZDateTime.nullable() }),
  disabledAt: ZDateTime.nullable(),
  createdAt: ZDateTime,
  updatedAt: ZDateTime,
});
export type TBankAccount = z.infer<typeof ZBankAccount>;

export const ZBankAccountResponse = z.strictObject({ bankAccount: ZBankAccount });
export const ZBankAccountList = z.strictObject({
  accountId: z.string(),
  bankAccounts: z.array(ZBankAccount),
  nextCursor: z.string().nullable(),
});

export const ZBankAccountRequirements = z.strictObject({
  version: z.number().int(),
  accountId: z.string(),
  countries: z.array(
    z.strictObject({
      country: z.string().length(2),
      name: z.string(),
      currency: z.string().length(3),
      implementation: z.string(),
      schema: z.record(z.string(), z.unknown()),
      alternatives: z.array(z.string()),
      available: z.boolean(),
      unavailableReason: z.string().nullable(),
    }),
  ),
});

export const ZBankDirectory = z.strictObject({
  country: z.enum(BANK_COUNTRIES),
  source: z.string(),
  version: z.string(),
  banks: z.array(
    z.strictObject({
      bankCode: z.string(),
      name: z.string(),
      shortName: z.string(),
      swiftBic: z.string(),
      routingNumbers: z.array(z.string().regex(/^[0-9]{9}$/)).optional(),
      napasBin: z.string().optional(),
    }),
  ),
});
