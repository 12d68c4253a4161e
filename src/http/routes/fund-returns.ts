import type { TEnvironments } from '../../config/environments';
import type Koa from 'koa';
import { z } from 'zod';
import type { Database } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { AddressBook } from '../../custody';
import type { FundReturnEngine } from '../../domain/engine/pure/engine';
import type { IdempotencyRecords } from '../../domain/requests/idempotency-records';
import { ZPaymentId } from '../../domain/payments/payment.schemas';
import { createRecovery, createRefund, listFundReturns, listIncidents, type FundReturnDeps } from '../../domain/returns/fund-returns';
import { recoverFunds } from '../../domain/operators/operator-approvals';
import { ZAdminCreateRecovery, ZCreateRecovery, ZCreateRefund } from '../../domain/returns/fund-return.schemas';
import { parseInput } from '../../domain/requests/validation';
import { requireAccess } from '../middleware/modules';
import { idempotent } from '../middleware/idempotency';
import { requireApp, requireOperator, type ApiRouter, type ApiState } from '../context';
import { adminRouter, bodyAsOperator, type AdminRouteDeps } from '../admin-router';
import { mountRouter } from '../mount-router';

export interface FundReturnRouteDeps {
  prisma: Database['prisma'];
  idempotency: IdempotencyRecords;
  custody: AddressBook;
  chains: ChainRegistry;
  engine: Pick<FundReturnEngine, 'startFundReturn'>;
  /** The networks' settings, for each return's finality (absent: none is shown). */
  environments?: TEnvironments;
}

const ZPaymentPath = z.object({ paymentId: ZPaymentId });

/**
 * Refunds and incident recoveries of a Payment (docs/decisions/refunds-and-recoveries.md "Refunds and incident recovery"):
 *
 *   POST /v2/payments/{paymentId}/refunds               {amount?, destinationAddress?, reason?}   201 {refund}
 *   GET  /v2/payments/{paymentId}/refunds                                                          {items}
 *   POST /v2/payments/{paymentId}/incident-recoveries   {incidentId, destinationAddress?, reason?} 201 {incidentRecovery}
 *   GET  /v2/payments/{paymentId}/incident-recoveries                                              {items}
 *   GET  /v2/payments/{paymentId}/incidents                                                        {items}
 *
 * Both POSTs require an Idempotency-Key (money moves).
 */
export function registerFundReturnRoutes(router: ApiRouter, deps: FundReturnRouteDeps): void {
  const access = requireAccess('v2:payments', 'payments');
  const domain: FundReturnDeps = { prisma: deps.prisma, custody: deps.custody, chains: deps.chains, engine: deps.engine };

  router.post('/v2/payments/:paymentId/refunds', ...access, idempotent(deps.idempotency, { required: true }), async (ctx) => {
    const { paymentId } = parseInput(ZPaymentPath, ctx.params, 'path');
    const input = parseInput(ZCreateRefund, ctx.state.body, 'body');
    ctx.status = 201;
    ctx.body = { refund: await createRefund(domain, requireApp(ctx), paymentId, input, ctx.state.idempotency) };
  });

  router.get('/v2/payments/:paymentId/refunds', ...access, async (ctx) => {
    const { paymentId } = parseInput(ZPaymentPath, ctx.params, 'path');
    ctx.body = await listFundReturns(deps, requireApp(ctx).id, paymentId, 'refund');
  });

  router.post('/v2/payments/:paymentId/incident-recoveries', ...access, idempotent(deps.idempotency, { required: true }), async (ctx) => {
    const { paymentId } = parseInput(ZPaymentPath, ctx.params, 'path');
    const input = parseInput(ZCreateRecovery, ctx.state.body, 'body');
    ctx.status = 201;
    const who = { by: 'partner' as const, app: requireApp(ctx), request: ctx.state.idempotency };
    ctx.body = { incidentRecovery: await createRecovery(domain, who, paymentId, input) };
  });

  router.get('/v2/payments/:paymentId/incident-recoveries', ...access, async (ctx) => {
    const { paymentId } = parseInput(ZPaymentPath, ctx.params, 'path');
    ctx.body = await listFundReturns(deps, requireApp(ctx).id, paymentId, 'incident_recovery');
  });

  router.get('/v2/payments/:paymentId/incidents', ...access, async (ctx) => {
    const { paymentId } = parseInput(ZPaymentPath, ctx.params, 'path');
    ctx.body = await listIncidents(deps.prisma, requireApp(ctx).id, paymentId);
  });
}

/**
 * The operator's twin of `npm run cli -- payments recover` (an operator's token; the actor is that operator):
 *
 *   POST /admin/v1/payments/{paymentId}/incident-recoveries   {incidentId, destinationAddress?, reason}
 *        201 {incidentRecovery} to the payer; 202 {approval} anywhere else (a second operator approves)
 */
export function registerFundReturnAdminRoutes(app: Koa<ApiState>, deps: Omit<FundReturnRouteDeps, 'idempotency'> & AdminRouteDeps): void {
  const router = adminRouter('/admin/v1/payments', deps, 'operator');
  const domain: FundReturnDeps = { prisma: deps.prisma, custody: deps.custody, chains: deps.chains, engine: deps.engine };

  router.post('/:paymentId/incident-recoveries', async (ctx) => {
    const { paymentId } = parseInput(ZPaymentPath, ctx.params, 'path');
    const { incidentId, destinationAddress, reason } = parseInput(ZAdminCreateRecovery, bodyAsOperator(ctx), 'body');
    const input = { incidentId, reason, ...(destinationAddress ? { destinationAddress } : {}) };
    const outcome = await recoverFunds(domain, { operator: requireOperator(ctx), channel: 'admin_api' }, paymentId, input);
    // To anyone but the payer: a request for a second operator, nothing sent yet.
    if ('approval' in outcome) {
      ctx.status = 202;
      ctx.body = outcome;
      return;
    }
    ctx.status = 201;
    ctx.body = { incidentRecovery: outcome.done };
  });

  mountRouter(app, router);
}
