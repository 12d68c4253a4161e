import Router from '@koa/router';
import type { PrismaClient } from '../db/client';
import { ApiError } from '../domain/requests/errors';
import { recordAdminAction, type AdminApiAction, type AdminTarget } from '../domain/operators/operator-actions';
import type { OperatorRole } from '../domain/operators/pure/operator-roles';
import { requireOperator, type ApiContext, type ApiMiddleware, type ApiState } from './context';
import { requireRole } from './middleware/admin-auth';
import { jsonBody } from './middleware/json-body';

/** What every admin API router needs: the operator authentication of the admin plane, and the body limit. */
export interface AdminRouteDeps {
  auth: ApiMiddleware;
  maxBodyBytes: number;
  prisma: PrismaClient;
}

/** A router under `prefix` on the admin plane: an operator's token required, at least `role`, JSON bodies. */
export function adminRouter(prefix: string, deps: AdminRouteDeps, role: OperatorRole): Router<ApiState> {
  // Case-sensitive: @koa/router matches routes without case but runs a router's `use` middleware only
  // on its exact prefix, so /ADMIN/V1/... would reach a handler past the operator's authentication.
  const router = new Router<ApiState>({ prefix, sensitive: true });
  router.use(deps.auth);
  router.use(requireRole(role));
  router.use(jsonBody(deps.maxBodyBytes));
  return router;
}

/**
 * The request body with the signed-in operator as its actor: the audit names who was authenticated,
 * never a name the caller typed, so a body that names an actor is refused.
 */
export function bodyAsOperator(ctx: ApiContext): Record<string, unknown> {
  const body = ctx.state.body ?? {};
  if (typeof body !== 'object' || Array.isArray(body)) return body as Record<string, unknown>;
  if ('actor' in body)
    throw new ApiError('bad_request', 'actor is the operator the token belongs to: leave it out', [
      { field: 'body.actor', message: 'not accepted: the signed-in operator is the actor' },
    ]);
  return { ...body, actor: requireOperator(ctx).email };
}

/**
 * Audits an admin action the domain does not audit itself (webhook endpoints, dashboard users): one
 * operator_actions row after the handler, with its outcome (a 4xx is refused, a 5xx failed).
 */
export function audit(
  deps: Pick<AdminRouteDeps, 'prisma'>,
  action: AdminApiAction,
  targetOf: (ctx: ApiContext) => AdminTarget,
): ApiMiddleware {
  return async (ctx, next) => {
    const operator = requireOperator(ctx);
    const target = targetOf(ctx);
    // The path is the caller's: a NUL can't be stored in text, and a refusal is audited all the same.
    const id = target.id.replace(/\0/g, '\\0').slice(0, 200);
    const entry = { actor: operator.email, channel: 'admin_api' as const, action, target: { ...target, id } };
    try {
      await next();
    } catch (err) {
      const refused = err instanceof ApiError && err.status < 500;
      await recordAdminAction(deps.prisma, entry, refused ? 'refused' : 'failed', err instanceof Error ? err.message : String(err));
      throw err;
    }
    await recordAdminAction(deps.prisma, entry, 'applied', null);
  };
}
