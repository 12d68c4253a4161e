import type Koa from 'koa';
import Router from '@koa/router';
import type { ServiceConfig } from '../../config';
import type { Database } from '../../db/client';
import { getAlert, listAlerts } from '../../domain/monitoring/alerts';
import type { CursorCodec } from '../../domain/requests/pagination';
import type { ApiState } from '../context';
import { adminAuth } from '../middleware/admin-auth';
import { mountRouter } from '../mount-router';

/**
 * Operator alerts over the admin API, the twin of `npm run cli -- alerts list`:
 *
 *   GET /admin/v1/alerts?open=true|false&kind=&limit=&cursor=   {items, nextCursor}, newest first
 *   GET /admin/v1/alerts/{alertId}                              {alert}
 *
 * Same guard as the webhook admin routes (Bearer ADMIN_API_TOKEN; no token, no routes) and the one
 * error envelope. Read-only: an alert resolves itself when a later pass finds the problem gone.
 */
export interface AlertAdminDeps {
  config: ServiceConfig;
  db: Database;
  cursors: CursorCodec;
}

export function registerAlertAdminRoutes(app: Koa<ApiState>, deps: AlertAdminDeps): void {
  const token = deps.config.admin.apiToken;
  if (!token) return;
  const prisma = deps.db.prisma;
  const router = new Router<ApiState>({ prefix: '/admin/v1/alerts' });
  router.use(adminAuth(token));

  router.get('/', async (ctx) => {
    ctx.body = await listAlerts(prisma, deps.cursors, ctx.query);
  });

  router.get('/:alertId', async (ctx) => {
    ctx.body = await getAlert(prisma, ctx.params);
  });

  mountRouter(app, router);
}
