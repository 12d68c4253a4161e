import { z } from 'zod';
import type { PrismaClient } from '../../db/client';
import type { AddressBook } from '../../custody';
import type { TEnvironments } from '../../config/environments';
import {
  ZAccountId,
  ZCreateAccount,
  ZExternalUserId,
  ZRegisterConnectedWallet,
  ZSetSettlementProfile,
  ZUpdateDisplayProfile,
  ZUpdatePaymentAcceptance,
} from '../../domain/accounts/account.schemas';
import { loadAccount, loadAccountByExternalUserId, toAccountBundle } from '../../domain/accounts/account-bundle';
import {
  accountCapabilities,
  createAccount,
  registerConnectedWallet,
  setSettlementProfile,
  updateDisplayProfile,
  updatePaymentAcceptance,
} from '../../domain/accounts/accounts';
import { requireAccess } from '../middleware/modules';
import { idempotent } from '../middleware/idempotency';
import type { IdempotencyRecords } from '../../domain/requests/idempotency-records';
import { requireApp, type ApiRouter } from '../context';
import { parseInput } from '../../domain/requests/validation';

export const ZAccountPath = z.object({ accountId: ZAccountId });
export const ZExternalUserPath = z.object({ externalUserId: ZExternalUserId });

export function registerAccountRoutes(
  router: ApiRouter,
  deps: { prisma: PrismaClient; idempotency: IdempotencyRecords; environments: TEnvironments; custody: AddressBook },
): void {
  const { prisma } = deps;
  const access = requireAccess('v2:accounts', 'accounts');
  const envOf = (env: 'sandbox' | 'production') => deps.environments.environments[env];

  router.post('/v2/accounts', ...access, idempotent(deps.idempotency, { required: false }), async (ctx) => {
    const input = parseInput(ZCreateAccount, ctx.state.body, 'body');
    ctx.body = await createAccount(prisma, requireApp(ctx), input);
    ctx.status = 201;
  });

  router.get('/v2/accounts/external/:externalUserId', ...access, async (ctx) => {
    const { externalUserId } = parseInput(ZExternalUserPath, ctx.params, 'path');
    ctx.body = toAccountBundle(await loadAccountByExternalUserId(prisma, requireApp(ctx).id, externalUserId));
  });

  router.get('/v2/accounts/:accountId', ...access, async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    ctx.body = toAccountBundle(await loadAccount(prisma, requireApp(ctx).id, accountId));
  });

  router.get('/v2/accounts/:accountId/capabilities', ...access, async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    const app = requireApp(ctx);
    ctx.body = await accountCapabilities(prisma, app, envOf(app.environment), accountId);
  });

  router.put('/v2/accounts/:accountId/display-profile', ...access, async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    const input = parseInput(ZUpdateDisplayProfile, ctx.state.body, 'body');
    ctx.body = await updateDisplayProfile(prisma, requireApp(ctx), accountId, input);
  });

  router.put('/v2/accounts/:accountId/payment-acceptance', ...access, async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    const input = parseInput(ZUpdatePaymentAcceptance, ctx.state.body, 'body');
    ctx.body = await updatePaymentAcceptance(prisma, requireApp(ctx), accountId, input);
  });

  router.post('/v2/accounts/:accountId/connected-wallets', ...access, idempotent(deps.idempotency, { required: false }), async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    const input = parseInput(ZRegisterConnectedWallet, ctx.state.body, 'body');
    const app = requireApp(ctx);
    ctx.body = await registerConnectedWallet(prisma, deps.custody, app, envOf(app.environment), accountId, input);
    ctx.status = 201;
  });

  router.put('/v2/accounts/:accountId/settlement-profile', ...access, async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    const input = parseInput(ZSetSettlementProfile, ctx.state.body, 'body');
    const app = requireApp(ctx);
    ctx.body = await setSettlementProfile(prisma, deps.custody, app, envOf(app.environment), accountId, input);
  });
}
