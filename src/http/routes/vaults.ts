import { z } from 'zod';
import type { PrismaClient } from '../../db/client';
import type { TEnvironments } from '../../config/environments';
import type { AddressBook } from '../../custody';
import type { ChainRegistry } from '../../chain/registry';
import type { Mailer } from '../../mail/mailer';
import { ZAccountId } from '../../domain/accounts/account.schemas';
import { createVault, getVault, putVaultPolicy } from '../../domain/vaults/vaults';
import { sendVaultApproval, verifyVaultApproval } from '../../domain/vaults/vault-approval';
import { listVaultAuditEvents } from '../../domain/vaults/vault-audit';
import { evaluateVaultPolicy } from '../../domain/vaults/vault-policy-evaluation';
import {
  ZCreateVault,
  ZEvaluateVaultPolicy,
  ZListVaultAuditEventsQuery,
  ZPutVaultPolicy,
  ZVaultId,
  ZVerifyVaultApproval,
} from '../../domain/vaults/vault.schemas';
import type { IdempotencyRecords } from '../../domain/requests/idempotency-records';
import type { CursorCodec } from '../../domain/requests/pagination';
import { parseInput, ZEmptyBody } from '../../domain/requests/validation';
import { requireAccess } from '../middleware/modules';
import { idempotent } from '../middleware/idempotency';
import { requireApp, type ApiMiddleware, type ApiRouter } from '../context';
import type { ServiceSecret } from '../../domain/keys/service-keys';

export interface VaultRouteDeps {
  prisma: PrismaClient;
  idempotency: IdempotencyRecords;
  custody: AddressBook;
  chains: Pick<ChainRegistry, 'get'>;
  environments: TEnvironments;
  cursors: CursorCodec;
  serviceSecret: ServiceSecret;
  mailer: Mailer | null;
}

const ZAccountPath = z.object({ accountId: ZAccountId });
export const ZVaultPath = z.object({ vaultId: ZVaultId });

/** The account's vault, its policy, the policy's email approval, its dry run and the audit trail: scope v2:vaults. */
export function registerVaultRoutes(router: ApiRouter, deps: VaultRouteDeps): void {
  const envOf = (ctx: Parameters<ApiMiddleware>[0]) => deps.environments.environments[requireApp(ctx).environment];
  const guard = requireAccess('v2:vaults', 'vaults');

  router.post('/v2/accounts/:accountId/vault', ...guard, idempotent(deps.idempotency, { required: false }), async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    const input = parseInput(ZCreateVault, ctx.state.body === undefined ? {} : ctx.state.body, 'body');
    const result = await createVault(deps, requireApp(ctx), envOf(ctx), accountId, input);
    ctx.status = result.created ? 201 : 200;
    ctx.body = { vault: result.vault };
  });

  router.get('/v2/accounts/:accountId/vault', ...guard, async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    ctx.body = await getVault(deps, requireApp(ctx), envOf(ctx), accountId);
  });

  router.put('/v2/accounts/:accountId/vault/policy', ...guard, idempotent(deps.idempotency, { required: false }), async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    const input = parseInput(ZPutVaultPolicy, ctx.state.body === undefined ? {} : ctx.state.body, 'body');
    ctx.body = await putVaultPolicy(deps, requireApp(ctx), envOf(ctx), accountId, input);
  });

  router.post('/v2/accounts/:accountId/vault/policy/approval', ...guard, async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    parseInput(ZEmptyBody, ctx.state.body === undefined ? {} : ctx.state.body, 'body');
    ctx.status = 201;
    ctx.body = await sendVaultApproval(deps, requireApp(ctx), accountId);
  });

  router.post('/v2/accounts/:accountId/vault/policy/approval/verify', ...guard, async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    const input = parseInput(ZVerifyVaultApproval, ctx.state.body === undefined ? {} : ctx.state.body, 'body');
    const app = requireApp(ctx);
    await verifyVaultApproval(deps, app, accountId, input.code);
    ctx.body = await getVault(deps, app, envOf(ctx), accountId);
  });

  router.get('/v2/accounts/:accountId/vault/audit-events', ...guard, async (ctx) => {
    const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
    const query = parseInput(ZListVaultAuditEventsQuery, ctx.query, 'query');
    ctx.body = await listVaultAuditEvents(deps.prisma, requireApp(ctx), accountId, query, deps.cursors);
  });

  // A dry run: it creates nothing, so it takes no Idempotency-Key (a retry evaluates again).
  router.post('/v2/vaults/:vaultId/policy/evaluate', ...guard, async (ctx) => {
    const { vaultId } = parseInput(ZVaultPath, ctx.params, 'path');
    const input = parseInput(ZEvaluateVaultPolicy, ctx.state.body ?? {}, 'body');
    ctx.body = await evaluateVaultPolicy(deps, requireApp(ctx), envOf(ctx), vaultId, input);
  });
}
