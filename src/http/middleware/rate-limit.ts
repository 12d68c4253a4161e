import type pg from 'pg';
import type { ApiContext, ApiMiddleware } from '../context';
import { ApiError } from '../../domain/requests/errors';
import { SharedQuota, type QuotaDecision } from './shared-quota';
import { timed } from '../../platform/step-timing';

export interface RateLimitPolicy {
  points: number;
  windowSeconds: number;
  /** How often this process adds its counts to the shared quota (ms; default 100). */
  syncMs?: number;
}

const resetSecondsOf = (decision: QuotaDecision) => Math.max(1, Math.ceil(decision.msBeforeReset / 1000));

/** 429 rate_limited with the spec's headers: Retry-After and the refusing policy's RateLimit-*. */
function rateLimited(policy: RateLimitPolicy, decision: QuotaDecision): ApiError {
  const resetSeconds = String(resetSecondsOf(decision));
  return new ApiError('rate_limited', 'Too many requests; retry after the Retry-After interval', undefined, {
    'Retry-After': resetSeconds,
    'RateLimit-Limit': String(policy.points),
    'RateLimit-Remaining': '0',
    'RateLimit-Reset': resetSeconds,
  });
}

/** The RateLimit-* headers of the most constrained policy: a later one replaces them only if it has fewer left. */
function setRateLimitHeaders(ctx: ApiContext, policy: RateLimitPolicy, decision: QuotaDecision): void {
  const shown = ctx.response.get('RateLimit-Remaining');
  if (shown !== '' && Number(shown) <= decision.remaining) return;
  ctx.set('RateLimit-Limit', String(policy.points));
  ctx.set('RateLimit-Remaining', String(decision.remaining));
  ctx.set('RateLimit-Reset', String(resetSecondsOf(decision)));
}

/**
 * Per-credential fixed window (or per whatever `keyOf` names: public routes count per client IP),
 * decided in memory and shared through PostgreSQL, so every API process counts against one quota
 * (src/http/middleware/shared-quota.ts). Every response carries the RateLimit-* headers; a 429 also
 * carries Retry-After. A request `keyOf` names no key for is not counted.
 */
export function rateLimit(
  pool: pg.Pool,
  policy: RateLimitPolicy,
  keyOf: (ctx: ApiContext) => string | undefined = (ctx) => ctx.state.app?.id,
): ApiMiddleware {
  const quota = new SharedQuota(pool, policy);
  return async (ctx, next) => {
    const key = keyOf(ctx);
    if (!key) return next();
    const decision = await timed('quota', () => quota.take(key));
    if (!decision.allowed) throw rateLimited(policy, decision);
    setRateLimitHeaders(ctx, policy, decision);
    await next();
  };
}

/** Runs a credential check under a limit; the check answers null for a credential it refuses. */
export type CredentialCheckLimit = <T>(ctx: ApiContext, check: () => Promise<T | null>) => Promise<T | null>;

/**
 * Failed credential checks per `keyOf` (a client address): a key that has failed `points` times in
 * the window is refused 429 before its credential is checked at all. A verified credential costs
 * nothing; a check that throws (the database down) is not a failure either. Only the 429 carries the
 * RateLimit-* headers: the answers of authenticated requests show the credential's own quota. Its
 * time is the check's (the `auth` step of Server-Timing).
 */
export function failedCredentialLimit(pool: pg.Pool, policy: RateLimitPolicy, keyOf: (ctx: ApiContext) => string): CredentialCheckLimit {
  const quota = new SharedQuota(pool, policy);
  return async (ctx, check) => {
    const hold = await quota.hold(keyOf(ctx));
    if (!hold.allowed) throw rateLimited(policy, hold);
    let result: Awaited<ReturnType<typeof check>>;
    try {
      result = await check();
    } catch (err) {
      hold.settle(false);
      throw err;
    }
    hold.settle(result === null);
    return result;
  };
}
