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

/** Runs a credential check of `appId` under a limit; the check answers null for a credential it refuses. */
export type CredentialCheckLimit = <T>(ctx: ApiContext, appId: string, check: () => Promise<T | null>) => Promise<T | null>;

/**
 * Failed credential checks per `keyOf` (a client address and the app id it tried). A check is counted
 * only once it has failed, so checks in flight cost nothing, and a correct credential is never refused
 * here: a partner's backend behind one egress address keeps working while someone else there fails.
 * A failure past `points` in the window is answered 429 instead of 401, with the RateLimit-* headers;
 * a check that throws (the database down) is not a failure. Its time is the check's (`auth` in
 * Server-Timing).
 */
export function failedCredentialLimit(
  pool: pg.Pool,
  policy: RateLimitPolicy,
  keyOf: (ctx: ApiContext, appId: string) => string,
): CredentialCheckLimit {
  const quota = new SharedQuota(pool, policy);
  return async (ctx, appId, check) => {
    const result = await check();
    if (result !== null) return result;
    const decision = await quota.take(keyOf(ctx, appId));
    if (!decision.allowed) throw rateLimited(policy, decision);
    return null;
  };
}
