import {
  ZCreateDepositAddress,
  ZDepositAddressList,
  ZDepositAddressResponse,
  ZDepositList,
  ZDepositResponse,
  ZListDepositAddressesQuery,
  ZListDepositsQuery,
} from '../../domain/deposits/deposit.schemas';
import { ZAccountPath } from '../routes/accounts';
import { ZDepositAddressPath, ZDepositPath } from '../routes/deposits';
import { EXAMPLE, depositAddressExample } from './examples';
import { operation, type OpenApiPaths } from './operation';

/** src/http/routes/deposits.ts */
const common = { tags: ['Deposits'], auth: 'app', scope: 'v2:deposit_addresses' } as const;
const created = {
  description: 'The deposit address.',
  schema: ZDepositAddressResponse,
  example: { depositAddress: depositAddressExample },
};

export const depositPaths: OpenApiPaths = {
  '/v2/accounts/{accountId}/deposit-addresses': {
    post: operation({
      ...common,
      operationId: 'createDepositAddress',
      summary: "Get the account's deposit address for a network and asset (201 new, 200 existing)",
      path: ZAccountPath,
      idempotency: 'optional',
      body: { schema: ZCreateDepositAddress, example: { chainId: EXAMPLE.CHAIN_ID, assetSymbol: 'USDC', newAddress: false } },
      responses: { 201: created, 200: { ...created, description: 'The existing deposit address for this network and asset.' } },
      errors: [409, 422, 424],
    }),
    get: operation({
      ...common,
      operationId: 'listDepositAddresses',
      summary: "List the account's deposit addresses",
      path: ZAccountPath,
      query: ZListDepositAddressesQuery,
      responses: { 200: { description: 'A page of deposit addresses.', schema: ZDepositAddressList } },
      errors: [424],
    }),
  },
  '/v2/accounts/{accountId}/deposit-addresses/{depositAddressId}': {
    get: operation({
      ...common,
      operationId: 'getDepositAddress',
      summary: 'Get a deposit address',
      path: ZDepositAddressPath,
      responses: { 200: { description: 'The deposit address.', schema: ZDepositAddressResponse } },
      errors: [424],
    }),
  },
  '/v2/accounts/{accountId}/deposits': {
    get: operation({
      ...common,
      operationId: 'listDeposits',
      summary: "List the account's deposits",
      path: ZAccountPath,
      query: ZListDepositsQuery,
      responses: { 200: { description: 'A page of deposits.', schema: ZDepositList } },
      errors: [424],
    }),
  },
  '/v2/accounts/{accountId}/deposits/{depositId}': {
    get: operation({
      ...common,
      operationId: 'getDeposit',
      summary: 'Get a deposit',
      path: ZDepositPath,
      responses: { 200: { description: 'The deposit.', schema: ZDepositResponse } },
      errors: [424],
    }),
  },
};
