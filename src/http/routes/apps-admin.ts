import type Koa from 'koa';
import { z } from 'zod';
import { ZAppIdInput } from '../../domain/apps/app-credentials';
import { revokeAppCredential, rotateAppCredential } from '../../domain/operators/operator-actions';
import { parseInput } from '../../domain/requests/validation';
import type { ApiState } from '../context';
import { mountRouter } from '../mount-router';
import { adminRouter, bodyAsOperator, type AdminRouteDeps } from '../admin-router';

/**
 * The operator's twin of `npm run cli -- apps rotate-secret|revoke` (an admin operator's token; the
 * actor is that operator):
 *
 *   POST /admin/v1/apps/{appId}/secret-rotations   {reason?, overlapSeconds?}   201 {appId, appSecret, environment, previousSecretsExpireAt}
 *   POST /admin/v1/apps/{appId}/revocation         {reason?}                    200 {appId, revokedAt}
 */
export function registerAppAdminRoutes(app: Koa<ApiState>, deps: AdminRouteDeps): void {
  const router = adminRouter('/admin/v1/apps', deps, 'admin');
  const appIdOf = (params: unknown) => parseInput(z.object({ appId: ZAppIdInput }), params, 'path').appId;

  router.post('/:appId/secret-rotations', async (ctx) => {
    const appId = appIdOf(ctx.params);
    ctx.body = await rotateAppCredential(deps.prisma, 'admin_api', appId, bodyAsOperator(ctx));
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
  });

  router.post('/:appId/revocation', async (ctx) => {
    const appId = appIdOf(ctx.params);
    ctx.body = await revokeAppCredential(deps.prisma, 'admin_api', appId, bodyAsOperator(ctx));
  });

  mountRouter(app, router);
}
