import type Koa from 'koa';
import { z } from 'zod';
import type { ServiceConfig } from '../../config';
import { getWebhookDelivery, listWebhookDeliveries, redeliverWebhook } from '../../domain/webhooks/deliveries';
import { recoverWebhookEndpoint } from '../../domain/webhooks/recovery';
import { ZAppId, ZWebhookDeliveryId, ZWebhookEndpointId } from '../../domain/webhooks/endpoint.schemas';
import {
  archiveWebhookEndpoint,
  createWebhookEndpoint,
  disableWebhookEndpoint,
  enableWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookEndpointSecret,
  updateWebhookEndpoint,
  type WebhookEndpointDeps,
} from '../../domain/webhooks/endpoints';
import type { WebhookEngine } from '../../domain/engine/pure/engine';
import type { ApiMiddleware, ApiState } from '../context';
import type { TEnvironments } from '../../config/environments';
import { requireWebhooksForApp } from '../../domain/webhooks/webhooks-module';
import { adminRouter, audit, type AdminRouteDeps } from '../admin-router';
import type { AdminApiAction } from '../../domain/operators/operator-actions';
import { requireRole } from '../middleware/admin-auth';
import type { CursorCodec } from '../../domain/requests/pagination';
import { parseInput } from '../../domain/requests/validation';
import { mountRouter } from '../mount-router';
import type { ServiceSecret } from '../../domain/keys/service-keys';

/**
 * Operator admin API for webhook endpoints and deliveries, the HTTP twin of `npm run cli -- webhooks`:
 *
 *   POST   /admin/v1/apps/{appId}/webhook-endpoints                          {url, description?, events?}
 *   GET    /admin/v1/apps/{appId}/webhook-endpoints
 *   GET    /admin/v1/apps/{appId}/webhook-endpoints/{endpointId}
 *   PATCH  /admin/v1/apps/{appId}/webhook-endpoints/{endpointId}             {description?, events?}
 *   POST   /admin/v1/apps/{appId}/webhook-endpoints/{endpointId}/disable|enable|archive|rotate-secret
 *   GET    /admin/v1/apps/{appId}/webhook-deliveries?endpointId&status&limit&cursor
 *   GET    /admin/v1/apps/{appId}/webhook-deliveries/{deliveryId}            {delivery, attempts}
 *   GET    /admin/v1/apps/{appId}/webhook-deliveries/{deliveryId}/attempts   {items}
 *   POST   /admin/v1/apps/{appId}/webhook-deliveries/{deliveryId}/redeliver
 *   POST   /admin/v1/apps/{appId}/webhook-endpoints/{endpointId}/recover      {since}
 *
 * On the admin plane: any operator's token reads, the operator role changes, and every change is in
 * the operator audit. No Basic auth, no partner rate limit, no Svc-Version.
 */
export interface WebhookAdminDeps extends AdminRouteDeps {
  config: ServiceConfig;
  /** Whose apps may have endpoints: the environments the webhooks module runs in. */
  environments: TEnvironments;
  serviceSecret: ServiceSecret;
  cursors: CursorCodec;
  engine?: Pick<WebhookEngine, 'kickWebhookDispatcher'>;
}

const ZAppPath = z.object({ appId: ZAppId });
const ZEndpointPath = z.object({ appId: ZAppId, endpointId: ZWebhookEndpointId });
const ZDeliveryPath = z.object({ appId: ZAppId, deliveryId: ZWebhookDeliveryId });

export function registerWebhookAdminRoutes(app: Koa<ApiState>, deps: WebhookAdminDeps): void {
  const prisma = deps.prisma;
  const endpointDeps: WebhookEndpointDeps = {
    prisma,
    serviceSecret: deps.serviceSecret,
    destinations: deps.config.webhooks,
  };
  const router = adminRouter('/admin/v1', deps, 'viewer');
  const onApp = (ctx: { params: Record<string, string> }) => ({ type: 'app' as const, id: String(ctx.params.appId) });
  /** A change: the operator role, audited under `action`, to an app whose environment runs the webhooks module (else 424). */
  const webhooksRun: ApiMiddleware = async (ctx, next) => {
    await requireWebhooksForApp(prisma, deps.environments, parseInput(ZAppPath, ctx.params, 'path').appId);
    await next();
  };
  const change = (action: AdminApiAction) => [requireRole('operator'), audit(deps, action, onApp), webhooksRun] as const;

  const endpointRef = (params: unknown) => parseInput(ZEndpointPath, params, 'path');

  router.post('/apps/:appId/webhook-endpoints', ...change('create-webhook-endpoint'), async (ctx) => {
    const { appId } = parseInput(ZAppPath, ctx.params, 'path');
    ctx.body = await createWebhookEndpoint(endpointDeps, appId, ctx.state.body);
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
  });

  router.get('/apps/:appId/webhook-endpoints', async (ctx) => {
    const { appId } = parseInput(ZAppPath, ctx.params, 'path');
    ctx.body = await listWebhookEndpoints(prisma, appId);
  });

  router.get('/apps/:appId/webhook-endpoints/:endpointId', async (ctx) => {
    ctx.body = await getWebhookEndpoint(prisma, endpointRef(ctx.params));
  });

  router.patch('/apps/:appId/webhook-endpoints/:endpointId', ...change('update-webhook-endpoint'), async (ctx) => {
    ctx.body = await updateWebhookEndpoint(prisma, endpointRef(ctx.params), ctx.state.body);
  });

  router.post('/apps/:appId/webhook-endpoints/:endpointId/disable', ...change('disable-webhook-endpoint'), async (ctx) => {
    ctx.body = await disableWebhookEndpoint(prisma, endpointRef(ctx.params));
  });

  router.post('/apps/:appId/webhook-endpoints/:endpointId/enable', ...change('enable-webhook-endpoint'), async (ctx) => {
    ctx.body = await enableWebhookEndpoint(prisma, endpointRef(ctx.params));
  });

  router.post('/apps/:appId/webhook-endpoints/:endpointId/archive', ...change('archive-webhook-endpoint'), async (ctx) => {
    ctx.body = await archiveWebhookEndpoint(prisma, endpointRef(ctx.params));
  });

  router.post('/apps/:appId/webhook-endpoints/:endpointId/rotate-secret', ...change('rotate-webhook-secret'), async (ctx) => {
    ctx.body = await rotateWebhookEndpointSecret(endpointDeps, endpointRef(ctx.params));
    ctx.set('Cache-Control', 'no-store');
  });

  router.get('/apps/:appId/webhook-deliveries', async (ctx) => {
    const { appId } = parseInput(ZAppPath, ctx.params, 'path');
    ctx.body = await listWebhookDeliveries(prisma, deps.cursors, appId, ctx.query);
  });

  router.get('/apps/:appId/webhook-deliveries/:deliveryId', async (ctx) => {
    ctx.body = await getWebhookDelivery(prisma, parseInput(ZDeliveryPath, ctx.params, 'path'));
  });

  router.get('/apps/:appId/webhook-deliveries/:deliveryId/attempts', async (ctx) => {
    const { attempts } = await getWebhookDelivery(prisma, parseInput(ZDeliveryPath, ctx.params, 'path'));
    ctx.body = { items: attempts };
  });

  // The dispatcher would pick queued deliveries up within its poll interval anyway; this only saves the wait.
  const kickDispatcher = async (ctx: Koa.ParameterizedContext<ApiState>) => {
    if (deps.engine) {
      await deps.engine
        .kickWebhookDispatcher()
        .catch((err: unknown) => ctx.state.log.warn({ err }, 'could not kick the webhook dispatcher'));
    }
  };

  router.post('/apps/:appId/webhook-deliveries/:deliveryId/redeliver', ...change('redeliver-webhook'), async (ctx) => {
    ctx.body = await redeliverWebhook(prisma, parseInput(ZDeliveryPath, ctx.params, 'path'));
    ctx.status = 202;
    await kickDispatcher(ctx);
  });

  router.post('/apps/:appId/webhook-endpoints/:endpointId/recover', ...change('recover-webhook-endpoint'), async (ctx) => {
    ctx.body = await recoverWebhookEndpoint(prisma, endpointRef(ctx.params), ctx.state.body);
    ctx.status = 202;
    await kickDispatcher(ctx);
  });

  mountRouter(app, router);
}
