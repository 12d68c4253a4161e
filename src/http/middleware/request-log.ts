import type { PrismaClient } from '../../db/client';
import { recordRequest } from '../../domain/dashboard/request-log';
import type { ApiMiddleware } from '../context';

/**
 * Writes each authenticated request of an app to its request log (the dashboard's), after the answer
 * is final: outside the error handler, so a refusal's status is the one recorded. The write is not
 * awaited: a request never waits for, or fails because of, its own log line.
 */
export function requestLog(prisma: PrismaClient): ApiMiddleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const app = ctx.state.app;
      if (app) {
        const key = ctx.get('Idempotency-Key');
        void recordRequest(prisma, {
          appId: app.id,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          latencyMs: Number(process.hrtime.bigint() - started) / 1e6,
          idempotencyKey: key === '' ? null : key,
          requestId: ctx.state.requestId,
        }).catch((err: unknown) => ctx.state.log.warn({ err }, 'could not write the request log'));
      }
    }
  };
}
