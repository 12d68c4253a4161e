import type Koa from 'koa';
import Router from '@koa/router';
import type { ServiceConfig } from '../../config';
import type { ApiState } from '../context';
import type { ServiceMetrics } from '../metrics';
import { adminAuth } from '../middleware/admin-auth';
import { mountRouter } from '../mount-router';

/**
 *   GET /metrics   the Prometheus text exposition (src/http/metrics.ts)
 *
 * Behind the admin token like the admin API (Bearer ADMIN_API_TOKEN, compared in constant time; no
 * token, no route: 404): the series name apps' volumes and the service's internals, not for the public.
 */
export function registerMetricsRoutes(app: Koa<ApiState>, deps: { config: ServiceConfig; metrics: ServiceMetrics }): void {
  const token = deps.config.admin.apiToken;
  if (!token) return;
  const router = new Router<ApiState>();
  router.get('/metrics', adminAuth(token), async (ctx) => {
    const { contentType, body } = await deps.metrics.render();
    ctx.set('Cache-Control', 'no-store');
    ctx.type = contentType;
    ctx.body = body;
  });
  mountRouter(app, router);
}
