import type Koa from 'koa';
import type Router from '@koa/router';

/** A route as the app's routers declare it: `GET /v2/accounts/:accountId`. */
export type RouteKey = `${string} ${string}`;

/**
 * Every route of a Koa app, read from the routers it mounted (`router.routes()` keeps its router on
 * the dispatch function), so a route added later is listed without anyone remembering to. HEAD,
 * which @koa/router adds beside every GET, is left out: it is the GET's route.
 */
export function listRoutes(app: Koa<any>): RouteKey[] {
  const keys = new Set<RouteKey>();
  for (const middleware of app.middleware) {
    const router = (middleware as { router?: Router }).router;
    if (!router) continue;
    for (const layer of router.stack) {
      if (layer.methods.length === 0 || typeof layer.path !== 'string') continue;
      for (const method of layer.methods) if (method !== 'HEAD') keys.add(`${method} ${layer.path}`);
    }
  }
  return [...keys].sort();
}
