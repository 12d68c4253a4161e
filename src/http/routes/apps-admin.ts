import type Koa from 'koa';
import Router from '@koa/router';
import { z } from 'zod';
import type { ServiceConfig } from '../../config';
import type { PrismaClient } from '../../db/client';
import { ZAppIdInput } from '../../domain/apps/app-credentials';
import { revokeAppCredential, rotateAppCredential } from '../../domain/operators/operator-actions';
import { parseInput } from '../../domain/requests/validation';
import type { ApiState } from '../context';
import { adminAuth } from '../middleware/admin-auth';
import { jsonBody } from '../middleware/json-body';
import { mountRouter } from '../mount-router';

/**
 * The operator's twin of `npm run cli -- apps rotate-secret|revoke` (Bearer ADMIN_API_TOKEN; no token, no route):
 *
 *   POST /admin/v1/apps/{appId}/secret-rotations   {actor, reason?, overlapSeconds?}   201 {appId, appSecret, environment, previousSecretsExpireAt}
 *   POST /admin/v1/apps/{appId}/revocation         {actor, reason?}                    200 {appId, revokedAt}
 */
export function registerAppAdminRoutes(app: Koa<ApiState>, deps: { config: ServiceConfig; prisma: PrismaClient }): void {
  const token = deps.config.admin.apiToken;
  if (!token) return;
  const router = new Router<ApiState>({ prefix: '/admin/v1/apps' });
  router.use(adminAuth(token));
  router.use(jsonBody(deps.config.http.maxBodyBytes));
  const appIdOf = (params: unknown) => parseInput(z.object({ appId: ZAppIdInput }), params, 'path').appId;

  router.post('/:appId/secret-rotations', async (ctx) => {
    const appId = appIdOf(ctx.params);
    ctx.body = await rotateAppCredential(deps.prisma, 'admin_api', appId, ctx.state.body);
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
  });

  router.post('/:appId/revocation', async (ctx) => {
    const appId = appIdOf(ctx.params);
    ctx.body = await revokeAppCredential(deps.prisma, 'admin_api', appId, ctx.state.body);
  });

  mountRouter(app, router);
}
