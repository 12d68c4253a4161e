import type Koa from 'koa';
import Router from '@koa/router';
import { z } from 'zod';
import type { ServiceConfig } from '../../config';
import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { OperatorEngine } from '../../domain/engine/pure/engine';
import { resolveHold, type HeldTarget } from '../../domain/operators/operator-actions';
import { ZAdminResolve, ZHeldId } from '../../domain/operators/operator-actions.schemas';
import { parseInput } from '../../domain/requests/validation';
import type { ApiState } from '../context';
import { adminAuth } from '../middleware/admin-auth';
import { jsonBody } from '../middleware/json-body';
import { mountRouter } from '../mount-router';

/**
 * The operator's releases of held items over the admin API, the twins of the console's forms and
 * `npm run cli -- payments|deposits|fund-returns resolve` (one audit: src/domain/operators/operator-actions.ts):
 *
 *   POST /admin/v1/payments/{paymentId}/resolve       {action, txHash?, reason?, actor}   200 {…, signalled: true}
 *   POST /admin/v1/deposits/{depositId}/resolve
 *   POST /admin/v1/fund-returns/{returnId}/resolve    a held refund or incident recovery
 *
 * Bearer ADMIN_API_TOKEN; no token, no routes.
 */
export function registerHoldAdminRoutes(
  app: Koa<ApiState>,
  deps: { config: ServiceConfig; prisma: PrismaClient; chains: ChainRegistry; engine: OperatorEngine },
): void {
  const token = deps.config.admin.apiToken;
  if (!token) return;
  const router = new Router<ApiState>({ prefix: '/admin/v1' });
  router.use(adminAuth(token));
  router.use(jsonBody(deps.config.http.maxBodyBytes));
  const paths: Record<HeldTarget['type'], string> = { payment: 'payments', deposit: 'deposits', fund_return: 'fund-returns' };
  for (const type of Object.keys(paths) as Array<HeldTarget['type']>) {
    router.post(`/${paths[type]}/:id/resolve`, async (ctx) => {
      const { id } = parseInput(z.object({ id: ZHeldId[type] }), ctx.params, 'path');
      const { actor, txHash, reason, action } = parseInput(ZAdminResolve, ctx.state.body, 'body');
      const request = { action, actor, ...(txHash ? { txHash } : {}), ...(reason ? { reason } : {}) };
      ctx.body = await resolveHold({ prisma: deps.prisma, chains: deps.chains }, deps.engine, { type, id }, request, 'admin_api');
    });
  }
  mountRouter(app, router);
}
