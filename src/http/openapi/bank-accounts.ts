import {
  ZBankAccountList,
  ZBankAccountRequirements,
  ZBankAccountResponse,
  ZBankDirectory,
  ZDirectoryQuery,
  ZListBankAccountsQuery,
} from '../../domain/bank-accounts/bank-account.schemas';
import { BANK_ACCOUNT_SCHEMAS } from '../../domain/bank-accounts/bank-requirements';
import { BANK_DIRECTORY } from '../../domain/bank-accounts/bank-directory';
import type { BankCountry } from '../../config/environments';
import { ZEmptyBody } from '../../domain/requests/validation';
import { ZAccountPath } from '../routes/accounts';
import { ZBankAccountPath } from '../routes/bank-accounts';
import { bankAccountExample } from './examples';
import { operation, type OpenApiPaths } from './operation';

/** A country's link schema whose bankCode is one of the country's directory (GET /v2/payments/external-bank/banks). */
function withDirectory(country: BankCountry, schema: Record<string, unknown>): Record<string, unknown> {
  const properties = schema.properties as Record<string, Record<string, unknown>>;
  return {
    ...schema,
    properties: { ...properties, bankCode: { ...properties.bankCode, enum: BANK_DIRECTORY[country].banks.map((b) => b.bankCode) } },
  };
}

/** src/http/routes/bank-accounts.ts */
const common = { tags: ['Bank accounts'], auth: 'app', scope: 'v2:accounts' } as const;
const bankAccount = (description: string, example?: unknown) => ({ description, schema: ZBankAccountResponse, example });

export const bankAccountPaths: OpenApiPaths = {
  '/v2/accounts/{accountId}/bank-account-requirements': {
    get: operation({
      ...common,
      operationId: 'getBankAccountRequirements',
      summary: 'What linking a bank account takes, per country',
      path: ZAccountPath,
      description:
        'Answers 200 also where the bank accounts module is off for the app: every country is then available false, with the reason.',
      responses: {
        200: {
          description: "One entry per country, with the strict JSON Schema a link's body must match.",
          schema: ZBankAccountRequirements,
        },
      },
      withoutErrors: [424],
    }),
  },
  '/v2/accounts/{accountId}/bank-accounts': {
    post: operation({
      ...common,
      operationId: 'linkBankAccount',
      summary: 'Link a bank account (verified by the off-ramp provider)',
      path: ZAccountPath,
      idempotency: 'required',
      body: {
        // The very JSON Schemas the service validates a link with (and publishes in the requirements),
        // with bankCode narrowed to the country's directory, which the link checks it against.
        schema: { oneOf: Object.entries(BANK_ACCOUNT_SCHEMAS).map(([country, schema]) => withDirectory(country as BankCountry, schema)) },
        description: "One of the countries' schemas from GET .../bank-account-requirements.",
        example: {
          country: 'US',
          currency: 'USD',
          accountHolderName: 'Corner Bakery LLC',
          bankName: 'JPMorgan Chase Bank, N.A.',
          bankCode: 'CHASUS33',
          routingNumber: '021000021',
          accountNumber: '000123456789',
          accountType: 'checking',
        },
      },
      responses: { 201: bankAccount('The linked bank account, pending verification.', { bankAccount: bankAccountExample }) },
      errors: [409, 422, 424, 502],
    }),
    get: operation({
      ...common,
      operationId: 'listBankAccounts',
      summary: "List the account's linked bank accounts",
      path: ZAccountPath,
      query: ZListBankAccountsQuery,
      responses: { 200: { description: 'A page of bank accounts.', schema: ZBankAccountList } },
    }),
  },
  '/v2/accounts/{accountId}/bank-accounts/{bankAccountId}': {
    get: operation({
      ...common,
      operationId: 'getBankAccount',
      summary: 'Get a linked bank account',
      path: ZBankAccountPath,
      responses: { 200: bankAccount('The bank account.') },
    }),
  },
  '/v2/accounts/{accountId}/bank-accounts/{bankAccountId}/disable': {
    post: operation({
      ...common,
      operationId: 'disableBankAccount',
      summary: 'Disable a linked bank account',
      path: ZBankAccountPath,
      idempotency: 'optional',
      body: { schema: ZEmptyBody, example: {} },
      responses: {
        200: bankAccount('The disabled bank account.', {
          bankAccount: {
            ...bankAccountExample,
            status: 'disabled',
            verification: { version: 2, verifiedAt: bankAccountExample.updatedAt },
            disabledAt: bankAccountExample.updatedAt,
          },
        }),
      },
      errors: [409],
    }),
  },
  '/v2/payments/external-bank/banks': {
    get: operation({
      tags: ['Bank accounts'],
      auth: 'app',
      scope: 'v2:payments',
      operationId: 'listBanks',
      summary: 'The bank directory of a country (bankCode values for linking)',
      query: ZDirectoryQuery,
      responses: { 200: { description: 'The banks.', schema: ZBankDirectory } },
    }),
  },
};
