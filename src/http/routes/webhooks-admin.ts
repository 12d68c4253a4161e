import type Koa from 'koa';
import Router from '@koa/router';
import { z } from 'zod';
import type { ServiceConfig } from '../../config';
import type { Database } from '../../db/client';
import { adminAuth } from '../middleware/admin-auth';
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
import type { ApiState } from '../context';
import { jsonBody } from '../middleware/json-body';
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
 * Guarded by `Authorization: Bearer <ADMIN_API_TOKEN>`, compared in constant time. Without a configured
 * token none of these routes exist (404). Kept apart from the partner router: no Basic auth, no
 * partner rate limit, no Svc-Version.
 */
export interface WebhookAdminDeps {
  config: ServiceConfig;
  db: Database;
  serviceSecret: ServiceSecret;
  cursors: CursorCodec;
  engine?: Pick<WebhookEngine, 'kickWebhookDispatcher'>;
}

const ZAppPath = z.object({ appId: ZAppId });
const ZEndpointPath = z.object({ appId: ZAppId, endpointId: ZWebhookEndpointId });
const ZDeliveryPath = z.object({ appId: ZAppId, deliveryId: ZWebhookDeliveryId });

export function registerWebhookAdminRoutes(app: Koa<ApiState>, deps: WebhookAdminDeps): void {
  const token = deps.config.admin.apiToken;
  if (!token) return;
  const prisma = deps.db.prisma;
  const endpointDeps: WebhookEndpointDeps = {
    prisma,
    serviceSecret: deps.serviceSecret,
    destinations: deps.config.webhooks,
  };
  const router = new Router<ApiState>({ prefix: '/admin/v1' });
  router.use(adminAuth(token));
  router.use(jsonBody(deps.config.http.maxBodyBytes));

  const endpointRef = (params: unknown) => parseInput(ZEndpointPath, params, 'path');

  router.post('/apps/:appId/webhook-endpoints', async (ctx) => {
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

  router.patch('/apps/:appId/webhook-endpoints/:endpointId', async (ctx) => {
    ctx.body = await updateWebhookEndpoint(prisma, endpointRef(ctx.params), ctx.state.body);
  });

  router.post('/apps/:appId/webhook-endpoints/:endpointId/disable', async (ctx) => {
    ctx.body = await disableWebhookEndpoint(prisma, endpointRef(ctx.params));
  });

  router.post('/apps/:appId/webhook-endpoints/:endpointId/enable', async (ctx) => {
    ctx.body = await enableWebhookEndpoint(prisma, endpointRef(ctx.params));
  });

  router.post('/apps/:appId/webhook-endpoints/:endpointId/archive', async (ctx) => {
    ctx.body = await archiveWebhookEndpoint(prisma, endpointRef(ctx.params));
  });

  router.post('/apps/:appId/webhook-endpoints/:endpointId/rotate-secret', async (ctx) => {
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

  router.post('/apps/:appId/webhook-deliveries/:deliveryId/redeliver', async (ctx) => {
    ctx.body = await redeliverWebhook(prisma, parseInput(ZDeliveryPath, ctx.params, 'path'));
    ctx.status = 202;
    await kickDispatcher(ctx);
  });

  router.post('/apps/:appId/webhook-endpoints/:endpointId/recover', async (ctx) => {
    ctx.body = await recoverWebhookEndpoint(prisma, endpointRef(ctx.params), ctx.state.body);
    ctx.status = 202;
    await kickDispatcher(ctx);
  });

  mountRouter(app, router);
}
