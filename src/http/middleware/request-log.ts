import type { PrismaClient } from '../../db/client';
import { recordRequest } from '../../domain/dashboard/request-log';
import type { ApiContext, ApiMiddleware } from '../context';

/** The path as the log keeps it: a partner's own user id (`externalUserId`) is not kept in it. */
function loggedPath(ctx: ApiContext): string {
  const route = ctx._matchedRoute;
  return typeof route === 'string' && route.includes(':externalUserId') ? route.replace(':externalUserId', '{externalUserId}') : ctx.path;
}

/**
 * Writes each request an app's own credential made (its secret or a client token) to its request log
 * (the dashboard's), after the answer is final: outside the error handler, so a refusal's status is
 * the one recorded. A public route's caller is anyone, and writes nothing into the app's log. The
 * write is not awaited: a request never waits for, or fails because of, its own log line.
 */
export function requestLog(prisma: PrismaClient): ApiMiddleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const app = ctx.state.app;
      if (app && ctx.state.authenticated) {
        const key = ctx.get('Idempotency-Key');
        void recordRequest(prisma, {
          appId: app.id,
          method: ctx.method,
          path: loggedPath(ctx),
          status: ctx.status,
          latencyMs: Number(process.hrtime.bigint() - started) / 1e6,
          idempotencyKey: key === '' ? null : key,
          requestId: ctx.state.requestId,
        }).catch((err: unknown) => ctx.state.log.warn({ err }, 'could not write the request log'));
      }
    }
  };
}
