import type pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { ApiMiddleware } from '../context';
import { ApiError } from '../../domain/errors';

export interface RateLimitPolicy {
  points: number;
  windowSeconds: number;
}

/**
 * Per-credential fixed window, counted in PostgreSQL so that every API process shares one quota.
 * Every response carries the RateLimit-* headers; a 429 also carries Retry-After.
 */
export function rateLimit(pool: pg.Pool, policy: RateLimitPolicy): ApiMiddleware {
  const limiter = new RateLimiterPostgres({
    storeClient: pool,
    tableName: 'rate_limits',
    tableCreated: true,
    clearExpiredByTimeout: false,
    keyPrefix: 'app',
    points: policy.points,
    duration: policy.windowSeconds,
  });

  return async (ctx, next) => {
    const appId = ctx.state.app?.id;
    if (!appId) return next();
    let res: RateLimiterRes;
    try {
      res = await limiter.consume(appId, 1);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      const resetSeconds = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
      throw new ApiError('rate_limited', 'Too many requests; retry after the Retry-After interval', undefined, {
        'Retry-After': String(resetSeconds),
        'RateLimit-Limit': String(policy.points),
        'RateLimit-Remaining': '0',
        'RateLimit-Reset': String(resetSeconds),
      });
    }
    ctx.set('RateLimit-Limit', String(policy.points));
    ctx.set('RateLimit-Remaining', String(Math.max(0, res.remainingPoints)));
    ctx.set('RateLimit-Reset', String(Math.max(0, Math.ceil(res.msBeforeNext / 1000))));
    await next();
  };
}
