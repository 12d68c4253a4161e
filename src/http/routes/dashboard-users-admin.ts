import type Koa from 'koa';
import { z } from 'zod';
import { ZAppIdInput } from '../../domain/apps/app-credentials';
import { invitePartnerUser, listPartnerUsers, removePartnerUser, ZPartnerUserId } from '../../domain/dashboard/partner-users';
import { parseInput } from '../../domain/requests/validation';
import { requireOperator, type ApiState } from '../context';
import { mountRouter } from '../mount-router';
import { adminRouter, audit, bodyAsOperator, type AdminRouteDeps } from '../admin-router';

/**
 * The operator's twin of `npm run cli -- dashboard invite|users|remove` (an admin operator's token; the
 * actor is that operator, and each change is in the operator audit too):
 *
 *   POST /admin/v1/apps/{appId}/dashboard-users                     {email, role}   201 {user}
 *   GET  /admin/v1/apps/{appId}/dashboard-users                                     200 {items}
 *   POST /admin/v1/apps/{appId}/dashboard-users/{userId}/removal    {}              200 {user}
 */
export function registerDashboardUserAdminRoutes(app: Koa<ApiState>, deps: AdminRouteDeps): void {
  const router = adminRouter('/admin/v1/apps', deps, 'admin');
  const appIdOf = (params: unknown) => parseInput(z.object({ appId: ZAppIdInput }), params, 'path').appId;
  const onApp = (ctx: { params: Record<string, string> }) => ({ type: 'app' as const, id: String(ctx.params.appId) });

  router.post('/:appId/dashboard-users', audit(deps, 'invite-dashboard-user', onApp), async (ctx) => {
    ctx.body = await invitePartnerUser(deps.prisma, appIdOf(ctx.params), bodyAsOperator(ctx));
    ctx.status = 201;
  });
  router.get('/:appId/dashboard-users', async (ctx) => {
    ctx.body = await listPartnerUsers(deps.prisma, appIdOf(ctx.params));
  });
  router.post('/:appId/dashboard-users/:userId/removal', audit(deps, 'remove-dashboard-user', onApp), async (ctx) => {
    const { appId, userId } = parseInput(z.object({ appId: ZAppIdInput, userId: ZPartnerUserId }), ctx.params, 'path');
    parseInput(z.strictObject({}), ctx.state.body ?? {}, 'body');
    ctx.body = await removePartnerUser(deps.prisma, appId, userId, requireOperator(ctx).email);
  });

  mountRouter(app, router);
}
