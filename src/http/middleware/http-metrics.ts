import type Koa from 'koa';
import type { ApiState } from '../context';
import type { ServiceMetrics } from '../metrics';

/** The label of a request no route matched (a 404): raw paths never become labels. */
export const UNMATCHED_ROUTE = 'unmatched';

interface RouteLayer {
  path: string | RegExp;
  methods: string[];
}

/**
 * Counts each request and its latency by the route template @koa/router matched (`/v2/payments/:paymentId`),
 * its method and final status. Runs outside the error handler, so the status is the one answered.
 */
export function httpMetrics(metrics: Pick<ServiceMetrics, 'observeRequest'>): Koa.Middleware<ApiState> {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      metrics.observeRequest({
        route: routeTemplate(ctx.matched as RouteLayer[] | undefined, ctx.method),
        method: ctx.method,
        status: ctx.status,
        seconds: Number(process.hrtime.bigint() - started) / 1e9,
      });
    }
  };
}

/**
 * The template of the route that answered: the first route layer (router.use layers have no methods)
 * whose path and method matched, else the first whose path did (a 405 is still that route's).
 */
function routeTemplate(matched: RouteLayer[] | undefined, method: string): string {
  const routes = (matched ?? []).filter((layer) => layer.methods.length > 0 && typeof layer.path === 'string');
  const route = routes.find((layer) => layer.methods.includes(method)) ?? routes[0];
  return route ? (route.path as string) : UNMATCHED_ROUTE;
}
