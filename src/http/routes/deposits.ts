import { z } from 'zod';
import type { PrismaClient } from '../../db/client';
import type { TEnvironments } from '../../config/environments';
import type { AddressBook } from '../../custody';
import { ZAccountId } from '../../domain/accounts/account.schemas';
import { createDepositAddress, getDepositAddress, listDepositAddresses } from '../../domain/deposits/deposit-addresses';
import { getDeposit, listDeposits } from '../../domain/deposits/deposits';
import {
  ZCreateDepositAddress,
  ZDepositAddressId,
  ZDepositId,
  ZListDepositAddressesQuery,
  ZListDepositsQuery,
} from '../../domain/deposits/deposit.schemas';
import { requireAccess } from '../middleware/modules';
import { idempotent } from '../middleware/idempotency';
import type { IdempotencyRecords } from '../../domain/requests/idempotency-records';
import { requireApp, type ApiRouter } from '../context';
import type { CursorCodec } from '../../domain/requests/pagination';
import { parseInput } from '../../domain/requests/validation';

export interface DepositRouteDeps {
  prisma: PrismaClient;
  idempotency: IdempotencyRecords;
  custody: AddressBook;
  environments: TEnvironments;
  cursors: CursorCodec;
}

const ZAccountPath = z.object({ accountId: ZAccountId });
export const ZDepositAddressPath = z.object({ accountId: ZAccountId, depositAddressId: ZDepositAddressId });
export const ZDepositPath = z.object({ accountId: ZAccountId, depositId: ZDepositId });

/** Deposit addresses and deposits of an account; every route needs the v2:deposit_addresses scope. */
export function registerDepositRoutes(router: ApiRouter, deps: DepositRouteDeps): void {
  const { prisma } = deps;
  const access = requireAccess('v2:deposit_addresses', 'deposit_addresses');

  // 201 with a new address; 200 with the account's existing one for that network and asset.
  router.post('/v2/accounts/:accountId/deposit-addresses', ...access, idempotent(deps.idempotency, { required: false }), async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    const input = parseInput(ZCreateDepositAddress, ctx.state.body === undefined ? {} : ctx.state.body, 'body');
    const app = requireApp(ctx);
    const result = await createDepositAddress(deps, app, deps.environments.environments[app.environment], accountId, input);
    ctx.status = result.created ? 201 : 200;
    ctx.body = { depositAddress: result.depositAddress };
  });

  router.get('/v2/accounts/:accountId/deposit-addresses', ...access, async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    const query = parseInput(ZListDepositAddressesQuery, ctx.query, 'query');
    ctx.body = await listDepositAddresses(prisma, requireApp(ctx), accountId, query, deps.cursors);
  });

  router.get('/v2/accounts/:accountId/deposit-addresses/:depositAddressId', ...access, async (ctx) => {
    const { accountId, depositAddressId } = parseInput(ZDepositAddressPath, ctx.params, 'path');
    ctx.body = await getDepositAddress(prisma, requireApp(ctx), accountId, depositAddressId);
  });

  router.get('/v2/accounts/:accountId/deposits', ...access, async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    const query = parseInput(ZListDepositsQuery, ctx.query, 'query');
    ctx.body = await listDeposits(deps, requireApp(ctx), accountId, query, deps.cursors);
  });

  router.get('/v2/accounts/:accountId/deposits/:depositId', ...access, async (ctx) => {
    const { accountId, depositId } = parseInput(ZDepositPath, ctx.params, 'path');
    ctx.body = await getDeposit(deps, requireApp(ctx), accountId, depositId);
  });
}
