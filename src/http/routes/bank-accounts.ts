import { z } from 'zod';
import type { PrismaClient } from '../../db/client';
import type { TEnvironments } from '../../config/environments';
import type { IdempotencyRecords } from '../../domain/requests/idempotency-records';
import type { CursorCodec } from '../../domain/requests/pagination';
import type { OfframpProvider } from '../../offramp/offramp-provider';
import { ZAccountId } from '../../domain/accounts/account.schemas';
import { ZBankAccountId, ZDirectoryQuery, ZListBankAccountsQuery } from '../../domain/bank-accounts/bank-account.schemas';
import {
  bankAccountRequirementsOf,
  disableBankAccount,
  getBankAccount,
  linkBankAccount,
  listBankAccounts,
} from '../../domain/bank-accounts/bank-accounts';
import { BANK_DIRECTORY } from '../../domain/bank-accounts/bank-directory';
import { moduleState, requireAccess } from '../middleware/modules';
import { requireScope } from '../middleware/auth';
import { idempotent } from '../middleware/idempotency';
import { requireApp, type ApiRouter } from '../context';
import { parseInput, ZEmptyBody } from '../../domain/requests/validation';
import type { ServiceSecret } from '../../domain/keys/service-keys';

const ZAccountPath = z.object({ accountId: ZAccountId });
export const ZBankAccountPath = z.object({ accountId: ZAccountId, bankAccountId: ZBankAccountId });

export interface BankAccountRouteDeps {
  prisma: PrismaClient;
  idempotency: IdempotencyRecords;
  environments: TEnvironments;
  cursors: CursorCodec;
  serviceSecret: ServiceSecret;
  /** The off-ramp provider that verifies linked accounts; absent, linking answers 424. */
  provider: OfframpProvider | undefined;
}

/**
 * Linked bank accounts (v2:accounts) and the bank directory (v2:payments): all of the bank_accounts
 * module, which runs where the environment enables a country and the deployment has its provider.
 */
export function registerBankAccountRoutes(router: ApiRouter, deps: BankAccountRouteDeps): void {
  const { prisma } = deps;
  const access = requireAccess('v2:accounts', 'bank_accounts');
  const envOf = (env: 'sandbox' | 'production') => deps.environments.environments[env];

  // The scope's 403 only, no module 424: where the module is off, every country is listed unavailable
  // with the module's reason (spec: every country not offered returns available false).
  router.get('/v2/accounts/:accountId/bank-account-requirements', requireScope('v2:accounts'), async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    const app = requireApp(ctx);
    ctx.body = await bankAccountRequirementsOf(prisma, app, envOf(app.environment), moduleState(ctx, 'bank_accounts'), accountId);
  });

  router.post('/v2/accounts/:accountId/bank-accounts', ...access, idempotent(deps.idempotency, { required: true }), async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    const app = requireApp(ctx);
    ctx.body = await linkBankAccount(
      { prisma, serviceSecret: deps.serviceSecret, provider: deps.provider },
      app,
      envOf(app.environment),
      accountId,
      ctx.state.body,
      ctx.get('Idempotency-Key'),
    );
    ctx.status = 201;
  });

  router.get('/v2/accounts/:accountId/bank-accounts', ...access, async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    const query = parseInput(ZListBankAccountsQuery, ctx.query, 'query');
    ctx.body = await listBankAccounts(prisma, requireApp(ctx), accountId, query, deps.cursors);
  });

  router.get('/v2/accounts/:accountId/bank-accounts/:bankAccountId', ...access, async (ctx) => {
    const { accountId, bankAccountId } = parseInput(ZBankAccountPath, ctx.params, 'path');
    ctx.body = await getBankAccount(prisma, requireApp(ctx), accountId, bankAccountId);
  });

  router.post(
    '/v2/accounts/:accountId/bank-accounts/:bankAccountId/disable',
    ...access,
    idempotent(deps.idempotency, { required: false }),
    async (ctx) => {
      const { accountId, bankAccountId } = parseInput(ZBankAccountPath, ctx.params, 'path');
      parseInput(ZEmptyBody, ctx.state.body, 'body');
      ctx.body = await disableBankAccount(prisma, requireApp(ctx), accountId, bankAccountId);
    },
  );

  router.get('/v2/payments/external-bank/banks', ...requireAccess('v2:payments', 'bank_accounts'), (ctx) => {
    const { country } = parseInput(ZDirectoryQuery, ctx.query, 'query');
    ctx.body = BANK_DIRECTORY[country];
  });
}
