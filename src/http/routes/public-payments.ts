import { createHash } from 'node:crypto';
import type pg from 'pg';
import { z } from 'zod';
import type { TEnvironments, EnvironmentName } from '../../config/environments';
import { ENVIRONMENTS } from '../../config/environments';
import type { PrismaClient } from '../../db/client';
import type { AddressBook } from '../../custody';
import type { PaymentEngine } from '../../domain/engine/pure/engine';
import type { AuthenticatedApp, Scope } from '../../domain/apps/apps';
import { notFound } from '../../domain/requests/errors';
import type { IdempotencyRecords } from '../../domain/requests/idempotency-records';
import { moduleAvailability, type ModuleRuntime } from '../../domain/apps/modules';
import {
  createPublicPayment,
  publicPaymentConfiguration,
  publicPaymentResponse,
  requirePublicPayments,
} from '../../domain/payments/public-payments';
import { ZCreatePublicPayment, ZPublicIdempotencyKey } from '../../domain/payments/public-payment.schemas';
import { parseInput } from '../../domain/requests/validation';
import { requireApp, type ApiMiddleware, type ApiRouter } from '../context';
import type { ClientIp } from '../middleware/client-ip';
import { idempotent, readIdempotencyKey } from '../middleware/idempotency';
import { rateLimit, type RateLimitPolicy } from '../middleware/rate-limit';
import type { ServiceSecret } from '../../domain/keys/service-keys';

export interface PublicPaymentRouteDeps {
  prisma: PrismaClient;
  pool: pg.Pool;
  idempotency: IdempotencyRecords;
  engine: Pick<PaymentEngine, 'startPayment'>;
  custody: AddressBook;
  environments: TEnvironments;
  serviceSecret: ServiceSecret;
  publicBaseUrl: string;
  clientIp: ClientIp;
  /** Per client address over every app's public routes, counted before the app is looked up. */
  perAddress: RateLimitPolicy;
}

export const ZAppPath = z.object({
  appId: z
    .string()
    .regex(/^app_[A-Za-z0-9_-]+$/, 'an app id (app_...)')
    .max(64),
});

/**
 * A public key space per app, apart from the partner's: a tab is not printable ASCII, so no partner
 * key (and no client API namespace) can name a payer's record or Payment id.
 */
const PUBLIC_KEY_NAMESPACE = 'public\t';

/**
 * The path's app, with no credential: the public routes act for it. An unknown app is 404 (the
 * same for every app id, so ids can't be probed beyond "exists").
 */
function publicApp(prisma: PrismaClient): ApiMiddleware {
  return async (ctx, next) => {
    const { appId } = parseInput(ZAppPath, ctx.params, 'path');
    const app = await prisma.app.findUnique({
      where: { id: appId },
      select: { id: true, name: true, environment: true, scopes: true, apiVersion: true, revokedAt: true },
    });
    // A revoked app takes no Payments, here as on its own credentials: answered as unknown.
    if (!app || app.revokedAt) throw notFound('App');
    const { id, name, apiVersion } = app;
    ctx.state.app = {
      id,
      name,
      apiVersion,
      environment: app.environment as EnvironmentName,
      scopes: app.scopes as Scope[],
    } satisfies AuthenticatedApp;
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
}

/** Each environment's per-IP quota (its publicPayments.rateLimit), counted for both public routes together. */
function perClientIp(pool: pg.Pool, environments: TEnvironments, clientIp: ClientIp): ApiMiddleware {
  const limits = new Map<EnvironmentName, ApiMiddleware>();
  for (const name of ENVIRONMENTS) {
    const policy = environments.environments[name].publicPayments?.rateLimit;
    if (policy)
      limits.set(
        name,
        rateLimit(pool, policy, (ctx) => `public:${name}:${clientIp(ctx)}`),
      );
  }
  return (ctx, next) => {
    const limit = limits.get(requireApp(ctx).environment);
    return limit ? limit(ctx, next) : next();
  };
}

/**
 * /v2/public/apps/{appId}/payments: no authentication (a payer's wallet calls it), on a router of its
 * own so the partner router's Basic authentication never runs here. Order: the address's quota over
 * every app, the app, Svc-Version, the environment's per-IP quota, then the body; a feature that is
 * off answers 424 before any input is read.
 */
export function registerPublicPaymentRoutes(
  router: ApiRouter,
  deps: PublicPaymentRouteDeps,
  shared: { jsonBody: ApiMiddleware; svcVersion: ApiMiddleware; runtime: ModuleRuntime },
): void {
  // On each route, not router.use: a router-level middleware doesn't see the route's :appId.
  const perAddress = rateLimit(deps.pool, deps.perAddress, (ctx) => `public:${deps.clientIp(ctx)}`);
  const opening = [
    perAddress,
    publicApp(deps.prisma),
    shared.svcVersion,
    perClientIp(deps.pool, deps.environments, deps.clientIp),
    shared.jsonBody,
  ];
  const envOf = (app: AuthenticatedApp) => deps.environments.environments[app.environment];
  const paymentsOf = (app: AuthenticatedApp) => moduleAvailability('payments', envOf(app), shared.runtime, app.scopes);

  router.get('/v2/public/apps/:appId/payments/configuration', ...opening, async (ctx) => {
    const app = requireApp(ctx);
    parseInput(z.strictObject({}), ctx.query, 'query');
    ctx.body = publicPaymentConfiguration(app, envOf(app), paymentsOf(app));
  });

  // The 424 comes before the Idempotency-Key is claimed: nothing is stored for a feature that is off.
  const featureOn: ApiMiddleware = async (ctx, next) => {
    const app = requireApp(ctx);
    requirePublicPayments(envOf(app), paymentsOf(app));
    if (ctx.headers['idempotency-key'] !== undefined) readIdempotencyKey(ctx, ZPublicIdempotencyKey);
    await next();
  };

  router.post(
    '/v2/public/apps/:appId/payments',
    ...opening,
    featureOn,
    idempotent(deps.idempotency, { required: true, namespace: () => PUBLIC_KEY_NAMESPACE }),
    async (ctx) => {
      const app = requireApp(ctx);
      const env = envOf(app);
      const cfg = requirePublicPayments(env, paymentsOf(app));
      const input = parseInput(ZCreatePublicPayment, ctx.state.body, 'body');
      const bodyHash = createHash('sha256')
        .update(ctx.state.rawBody ?? Buffer.alloc(0))
        .digest('hex');
      // The same key space as the idempotency record: the Payment id derives from it (paymentIdFor).
      const idempotencyKey = `${PUBLIC_KEY_NAMESPACE}:${ctx.get('Idempotency-Key')}`;
      const row = await createPublicPayment({ ...deps }, app, env, cfg, input, { idempotencyKey, bodyHash });
      ctx.status = 201;
      ctx.body = publicPaymentResponse(row, env, deps.publicBaseUrl);
    },
  );
}
