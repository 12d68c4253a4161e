import { z } from 'zod';
import type { PrismaClient } from '../../db/client';
import { ZAccountId } from '../../domain/accounts/account.schemas';
import { getAccountBalances } from '../../domain/ledger/balances';
import { getAccountTransaction, listAccountTransactions } from '../../domain/ledger/transactions';
import { ZGetTransactionPath, ZListTransactionsQuery } from '../../domain/ledger/transactions.schemas';
import { requireAccess } from '../middleware/modules';
import { requireApp, type ApiRouter } from '../context';
import type { CursorCodec } from '../../domain/requests/pagination';
import { parseInput } from '../../domain/requests/validation';

const ZAccountPath = z.object({ accountId: ZAccountId });

/** Transactions and balances: read-only projections of the ledger (src/domain/ledger). */
export function registerTransactionRoutes(router: ApiRouter, deps: { prisma: PrismaClient; cursors: CursorCodec }): void {
  const { prisma, cursors } = deps;
  const access = requireAccess('v2:accounts', 'balances_and_transactions');

  router.get('/v2/accounts/:accountId/transactions', ...access, async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    const query = parseInput(ZListTransactionsQuery, ctx.query, 'query');
    ctx.body = await listAccountTransactions(prisma, cursors, requireApp(ctx).id, accountId, query);
  });

  router.get('/v2/accounts/:accountId/transactions/:transactionId', ...access, async (ctx) => {
    const { accountId, transactionId } = parseInput(ZGetTransactionPath, ctx.params, 'path');
    ctx.body = await getAccountTransaction(prisma, requireApp(ctx).id, accountId, transactionId);
  });

  router.get('/v2/accounts/:accountId/balances', ...access, async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    ctx.body = await getAccountBalances(prisma, requireApp(ctx).id, accountId);
  });
}
