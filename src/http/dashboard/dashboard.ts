import type Koa from 'koa';
import Router from '@koa/router';
import type { ApiState } from '../context';
import { htmlAreaGuard } from '../html-area';
import { CONSOLE_CSS } from '../console/console-views';
import * as views from './dashboard-views';
import { registerCredentialPages } from './credential-pages';
import { dashboardKit, type DashboardCtx, type DashboardDeps, type DashboardState } from './kit';
import { registerReadPages } from './read-pages';
import { registerResourcePages } from './resource-pages';
import { registerSignInPages } from './sign-in-pages';
import { registerDeliveryPages, registerEndpointActions, registerEndpointPages } from './webhook-pages';

export type { DashboardDeps } from './kit';

/**
 * The partner dashboard (docs/decisions/dashboard-and-console.md "The partner dashboard"): server-rendered pages under
 * /dashboard where a partner's users, invited by an operator, sign in with an emailed code and manage
 * their app environment's webhook endpoints, read its deliveries, events, Payments, deposits and
 * request log, and (admins) rotate or revoke its secret. Every change goes through the same domain
 * functions as the admin API and is written to the partner audit with who did it.
 */
export function registerPartnerDashboard(app: Koa<ApiState>, deps: DashboardDeps): void {
  const kit = dashboardKit(deps);
  const router = new Router<DashboardState>({ prefix: '/dashboard' });
  router.use(
    htmlAreaGuard('partner dashboard', (ctx, status, problem) =>
      kit.send(ctx as DashboardCtx, status, 'Error', views.messagePage(status === 404 ? 'Not found' : 'Request refused', problem)),
    ),
  );
  router.get('/assets/dashboard.css', (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.type = 'text/css; charset=utf-8';
    ctx.body = CONSOLE_CSS;
  });
  router.get('/assets/finality.js', (ctx) => {
    // Named by content hash in the page: a new deploy is a new URL.
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = kit.finalityScript.body;
  });
  for (const register of [
    registerSignInPages,
    registerEndpointPages,
    registerEndpointActions,
    registerDeliveryPages,
    registerReadPages,
    registerResourcePages,
    registerCredentialPages,
  ])
    register(router, kit);
  app.use(router.routes() as unknown as Koa.Middleware<ApiState>);
  app.use(router.allowedMethods() as unknown as Koa.Middleware<ApiState>);
}
