import type pg from 'pg';
import type { ApiContext, ApiMiddleware } from '../context';
import { ApiError } from '../../domain/errors';
import { SharedQuota } from './shared-quota';
import { timed } from '../../runtime/step-timing';

export interface RateLimitPolicy {
  points: number;
  windowSeconds: number;
  /** How often this process adds its counts to the shared quota (ms; default 100). */
  syncMs?: number;
}

/**
 * Per-credential fixed window (or per whatever `keyOf` names: public routes count per client IP),
 * decided in memory and shared through PostgreSQL, so every API process counts against one quota
 * (src/http/middleware/shared-quota.ts). Every response carries the RateLimit-* headers; a 429 also
 * carries Retry-After. A request `keyOf` names no key for is not counted.
 */
export function rateLimit(pool: pg.Pool, policy: RateLimitPolicy, keyOf: (ctx: ApiContext) => string | undefined = (ctx) => ctx.state.app?.id): ApiMiddleware {
  const quota = new SharedQuota(pool, policy);
  return async (ctx, next) => {
    const key = keyOf(ctx);
    if (!key) return next();
    const decision = await timed('quota', () => quota.take(key));
    const resetSeconds = Math.max(1, Math.ceil(decision.msBeforeReset / 1000));
    if (!decision.allowed) {
      throw new ApiError('rate_limited', 'Too many requests; retry after the Retry-After interval', undefined, {
        'Retry-After': String(resetSeconds),
        'RateLimit-Limit': String(policy.points),
        'RateLimit-Remaining': '0',
        'RateLimit-Reset': String(resetSeconds),
      });
    }
    ctx.set('RateLimit-Limit', String(policy.points));
    ctx.set('RateLimit-Remaining', String(decision.remaining));
    ctx.set('RateLimit-Reset', String(resetSeconds));
    await next();
  };
}
