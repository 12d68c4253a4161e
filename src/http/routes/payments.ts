import { createHash } from 'node:crypto';
import type pg from 'pg';
import { z } from 'zod';
import type { PrismaClient } from '../../db/client';
import type { TEnvironments } from '../../config/environments';
import type { AddressBook } from '../../custody';
import type { PaymentEngine } from '../../domain/engine/pure/engine';
import { createPayment } from '../../domain/payments/create-payment';
import { cancelPayment, listPayments, loadPayment, paymentResponse, paymentResponseOf } from '../../domain/payments/payments';
import { NO_FINALITY } from '../../domain/chain/finality.schemas';
import { ZCancelPayment, ZCreatePayment, ZListPaymentsQuery, ZPaymentId } from '../../domain/payments/payment.schemas';
import { checkoutSecretSealing, toCheckout } from '../../domain/payments/payment-view';
import { requireAccess } from '../middleware/modules';
import { idempotent } from '../middleware/idempotency';
import type { IdempotencyRecords } from '../../domain/requests/idempotency-records';
import { requireApp, type ApiRouter } from '../context';
import type { CursorCodec } from '../../domain/requests/pagination';
import { parseInput } from '../../domain/requests/validation';
import type { OfframpDeps } from '../../domain/payments/payment-payouts';
import type { ServiceSecret } from '../../domain/keys/service-keys';

export interface PaymentRouteDeps {
  prisma: PrismaClient;
  pool: pg.Pool;
  idempotency: IdempotencyRecords;
  engine: Pick<PaymentEngine, 'startPayment' | 'cancelPayment'>;
  custody: AddressBook;
  environments: TEnvironments;
  serviceSecret: ServiceSecret;
  publicBaseUrl: string;
  cursors: CursorCodec;
  offramp?: OfframpDeps;
}

export const ZPaymentPath = z.object({ paymentId: ZPaymentId });

export function registerPaymentRoutes(router: ApiRouter, deps: PaymentRouteDeps): void {
  const { prisma } = deps;
  const access = requireAccess('v2:payments', 'payments');

  // The stored idempotent response never holds the clientSecret; a replay derives it again.
  const { seal, unseal } = checkoutSecretSealing(deps.serviceSecret);

  router.post('/v2/payments', ...access, idempotent(deps.idempotency, { required: true, seal, unseal }), async (ctx) => {
    const input = parseInput(ZCreatePayment, ctx.state.body, 'body');
    const app = requireApp(ctx);
    const bodyHash = createHash('sha256')
      .update(ctx.state.rawBody ?? Buffer.alloc(0))
      .digest('hex');
    const row = await createPayment(deps, app, deps.environments.environments[app.environment], input, {
      idempotencyKey: ctx.get('Idempotency-Key'),
      bodyHash,
    });
    ctx.status = 201;
    // Just created: nothing on chain yet.
    ctx.body = { ...paymentResponse(row, NO_FINALITY), checkout: toCheckout(row, deps.serviceSecret, deps.publicBaseUrl) };
  });

  router.get('/v2/payments', ...access, async (ctx) => {
    const query = parseInput(ZListPaymentsQuery, ctx.query, 'query');
    ctx.body = await listPayments(deps, requireApp(ctx), query, deps.cursors);
  });

  router.get('/v2/payments/:paymentId', ...access, async (ctx) => {
    const { paymentId } = parseInput(ZPaymentPath, ctx.params, 'path');
    ctx.body = await paymentResponseOf(deps, await loadPayment(prisma, requireApp(ctx).id, paymentId));
  });

  router.post('/v2/payments/:paymentId/cancel', ...access, idempotent(deps.idempotency, { required: false }), async (ctx) => {
    const { paymentId } = parseInput(ZPaymentPath, ctx.params, 'path');
    const input = parseInput(ZCancelPayment, ctx.state.body, 'body');
    const row = await cancelPayment(prisma, deps.engine, requireApp(ctx), paymentId, input);
    ctx.body = await paymentResponseOf(deps, row);
  });
}
