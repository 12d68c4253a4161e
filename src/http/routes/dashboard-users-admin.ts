import type Koa from 'koa';
import Router from '@koa/router';
import { z } from 'zod';
import type { ServiceConfig } from '../../config';
import type { PrismaClient } from '../../db/client';
import { ZAppIdInput } from '../../domain/apps/app-credentials';
import { invitePartnerUser, listPartnerUsers, removePartnerUser, ZPartnerUserId } from '../../domain/dashboard/partner-users';
import { parseInput } from '../../domain/requests/validation';
import type { ApiState } from '../context';
import { adminAuth } from '../middleware/admin-auth';
import { jsonBody } from '../middleware/json-body';
import { mountRouter } from '../mount-router';

/**
 * The operator's twin of `npm run cli -- dashboard invite|users|remove` (Bearer ADMIN_API_TOKEN; no token, no route):
 *
 *   POST /admin/v1/apps/{appId}/dashboard-users                     {email, role, actor}   201 {user}
 *   GET  /admin/v1/apps/{appId}/dashboard-users                                             200 {items}
 *   POST /admin/v1/apps/{appId}/dashboard-users/{userId}/removal    {actor}                200 {user}
 */
export function registerDashboardUserAdminRoutes(app: Koa<ApiState>, deps: { config: ServiceConfig; prisma: PrismaClient }): void {
  const token = deps.config.admin.apiToken;
  if (!token) return;
  const router = new Router<ApiState>({ prefix: '/admin/v1/apps' });
  router.use(adminAuth(token));
  router.use(jsonBody(deps.config.http.maxBodyBytes));
  const appIdOf = (params: unknown) => parseInput(z.object({ appId: ZAppIdInput }), params, 'path').appId;

  router.post('/:appId/dashboard-users', async (ctx) => {
    ctx.body = await invitePartnerUser(deps.prisma, appIdOf(ctx.params), ctx.state.body);
    ctx.status = 201;
  });
  router.get('/:appId/dashboard-users', async (ctx) => {
    ctx.body = await listPartnerUsers(deps.prisma, appIdOf(ctx.params));
  });
  router.post('/:appId/dashboard-users/:userId/removal', async (ctx) => {
    const { appId, userId } = parseInput(z.object({ appId: ZAppIdInput, userId: ZPartnerUserId }), ctx.params, 'path');
    const { actor } = parseInput(z.strictObject({ actor: z.string().trim().min(1).max(200) }), ctx.state.body ?? {}, 'body');
    ctx.body = await removePartnerUser(deps.prisma, appId, userId, actor);
  });

  mountRouter(app, router);
}
