import { ZBalances } from '../../domain/ledger/balances.schemas';
import {
  ZGetTransactionPath,
  ZListTransactionsQuery,
  ZTransactionDetail,
  ZTransactionList,
} from '../../domain/ledger/transactions.schemas';
import { ZAccountPath } from '../routes/accounts';
import { operation, type OpenApiPaths } from './operation';

/** src/http/routes/transactions.ts */
const common = { tags: ['Balances and transactions'], auth: 'app', scope: 'v2:accounts' } as const;

export const transactionPaths: OpenApiPaths = {
  '/v2/accounts/{accountId}/transactions': {
    get: operation({
      ...common,
      operationId: 'listTransactions',
      summary: "List the account's transactions, newest first",
      path: ZAccountPath,
      query: ZListTransactionsQuery,
      responses: { 200: { description: 'A page of transactions.', schema: ZTransactionList } },
    }),
  },
  '/v2/accounts/{accountId}/transactions/{transactionId}': {
    get: operation({
      ...common,
      operationId: 'getTransaction',
      summary: 'Get a transaction with its ledger entries',
      path: ZGetTransactionPath,
      responses: { 200: { description: 'The transaction.', schema: ZTransactionDetail } },
    }),
  },
  '/v2/accounts/{accountId}/balances': {
    get: operation({
      ...common,
      operationId: 'getBalances',
      summary: "The account's balances per asset, from the ledger",
      path: ZAccountPath,
      responses: { 200: { description: 'The balances.', schema: ZBalances } },
    }),
  },
};
