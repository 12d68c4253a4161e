import type Koa from 'koa';
import Router from '@koa/router';
import type { ApiState } from '../context';
import type { ServiceMetrics } from '../metrics';
import { metricsAuth } from '../middleware/admin-auth';
import { mountRouter } from '../mount-router';

/**
 *   GET /metrics   the Prometheus text exposition (src/http/metrics.ts)
 *
 * On the admin listener only, behind Prometheus's own read-only credential (Bearer METRICS_TOKEN,
 * compared in constant time; no token configured, no route: 404): the series name apps' volumes and
 * the service's internals, not for the public.
 */
export function registerMetricsRoutes(app: Koa<ApiState>, deps: { metricsToken: string; metrics: ServiceMetrics }): void {
  const router = new Router<ApiState>();
  router.get('/metrics', metricsAuth(deps.metricsToken), async (ctx) => {
    const { contentType, body } = await deps.metrics.render();
    ctx.set('Cache-Control', 'no-store');
    ctx.type = contentType;
    ctx.body = body;
  });
  mountRouter(app, router);
}
