import type Koa from 'koa';
import { getAlert, listAlerts } from '../../domain/monitoring/alerts';
import type { CursorCodec } from '../../domain/requests/pagination';
import type { ApiState } from '../context';
import { mountRouter } from '../mount-router';
import { adminRouter, type AdminRouteDeps } from '../admin-router';

/**
 * Operator alerts over the admin API, the twin of `npm run cli -- alerts list`:
 *
 *   GET /admin/v1/alerts?open=true|false&kind=&limit=&cursor=   {items, nextCursor}, newest first
 *   GET /admin/v1/alerts/{alertId}                              {alert}
 *
 * Any operator's token (viewer and up) and the one error envelope. Read-only: an alert resolves itself
 * when a later pass finds the problem gone.
 */
export function registerAlertAdminRoutes(app: Koa<ApiState>, deps: AdminRouteDeps & { cursors: CursorCodec }): void {
  const prisma = deps.prisma;
  const router = adminRouter('/admin/v1/alerts', deps, 'viewer');

  router.get('/', async (ctx) => {
    ctx.body = await listAlerts(prisma, deps.cursors, ctx.query);
  });

  router.get('/:alertId', async (ctx) => {
    ctx.body = await getAlert(prisma, ctx.params);
  });

  mountRouter(app, router);
}
