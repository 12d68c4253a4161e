import type Koa from 'koa';
import { z } from 'zod';
import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { OperatorEngine } from '../../domain/engine/pure/engine';
import type { HeldTarget } from '../../domain/operators/operator-actions';
import { releaseHold } from '../../domain/operators/operator-approvals';
import { ZAdminResolve, ZHeldId } from '../../domain/operators/operator-actions.schemas';
import { parseInput } from '../../domain/requests/validation';
import { requireOperator, type ApiState } from '../context';
import { mountRouter } from '../mount-router';
import { adminRouter, bodyAsOperator, type AdminRouteDeps } from '../admin-router';

/**
 * The operator's releases of held items over the admin API, the twins of the console's forms and
 * `npm run cli -- payments|deposits|fund-returns resolve` (one audit: src/domain/operators/operator-actions.ts):
 *
 *   POST /admin/v1/payments/{paymentId}/resolve       {action, txHash?, reason?}   200 {…, signalled: true}
 *                                                     or 202 {approval} for a mark-settled or a funded Payment's fail
 *   POST /admin/v1/deposits/{depositId}/resolve
 *   POST /admin/v1/fund-returns/{returnId}/resolve    a held refund or incident recovery
 *
 * An operator's token (operator role and up); the actor is that operator.
 */
export function registerHoldAdminRoutes(
  app: Koa<ApiState>,
  deps: AdminRouteDeps & { prisma: PrismaClient; chains: ChainRegistry; engine: OperatorEngine },
): void {
  const router = adminRouter('/admin/v1', deps, 'operator');
  const paths: Record<HeldTarget['type'], string> = { payment: 'payments', deposit: 'deposits', fund_return: 'fund-returns' };
  for (const type of Object.keys(paths) as Array<HeldTarget['type']>) {
    router.post(`/${paths[type]}/:id/resolve`, async (ctx) => {
      const { id } = parseInput(z.object({ id: ZHeldId[type] }), ctx.params, 'path');
      const { txHash, reason, action } = parseInput(ZAdminResolve, bodyAsOperator(ctx), 'body');
      const request = { action, ...(txHash ? { txHash } : {}), ...(reason ? { reason } : {}) };
      const outcome = await releaseHold(deps, { operator: requireOperator(ctx), channel: 'admin_api' }, { type, id }, request);
      // A money-moving release waits for a second operator: accepted, not done.
      if ('approval' in outcome) {
        ctx.status = 202;
        ctx.body = outcome;
      } else ctx.body = outcome.done;
    });
  }
  mountRouter(app, router);
}
