import type pg from 'pg';
import type { PrismaClient } from '../../db/client';
import type { Logger } from '../../logger';
import { ApiError } from '../../domain/requests/errors';
import { raiseAlert } from '../../domain/monitoring/alerts';
import { operatorOfToken } from '../../domain/operators/operator-accounts';
import { hasRole, type OperatorRole } from '../../domain/operators/pure/operator-roles';
import { safeEqual, sha256Hex } from '../../platform/secrets';
import type { ApiContext, ApiMiddleware } from '../context';
import { SharedQuota } from './shared-quota';
import type { RateLimitPolicy } from './rate-limit';

const bearerOf = (ctx: ApiContext) => /^Bearer ([\x21-\x7e]+)$/.exec(ctx.get('Authorization'))?.[1];

const unauthorized = (what: string) =>
  new ApiError('unauthorized', `Admin authentication required: Authorization: Bearer <${what}>`, undefined, {
    'WWW-Authenticate': 'Bearer realm="partner-payments-admin"',
  });

/**
 * Failed operator sign-ins and tokens, counted per client address (and per email for sign-ins) in
 * PostgreSQL so every API process agrees. Past the limit the address or email is refused at once,
 * before any check, and an operator alert says who is being tried from where.
 */
export interface OperatorThrottle {
  /** One sign-in attempt of `email` from the context's address; throws 429 past either limit. */
  signInAttempt(ctx: ApiContext, email: string): Promise<void>;
  /** One sign-in step from the context's address where no email is typed (the company provider's); throws 429 past the limit. */
  addressAttempt(ctx: ApiContext): Promise<void>;
  /** A failed token from the context's address; throws 429 past the limit. */
  tokenFailure(ctx: ApiContext): Promise<void>;
}

export function operatorThrottle(deps: {
  pool: pg.Pool;
  prisma: PrismaClient;
  logger: Logger;
  policy: RateLimitPolicy;
  clientIp: (ctx: ApiContext) => string;
}): OperatorThrottle {
  const quota = new SharedQuota(deps.pool, deps.policy);
  const refuse = async (subject: string, what: string) => {
    await raiseAlert(
      { prisma: deps.prisma, logger: deps.logger },
      { kind: 'operator_sign_in_throttled', severity: 'warning', subject, details: { what, windowSeconds: deps.policy.windowSeconds } },
    );
    return new ApiError('rate_limited', 'Too many operator sign-in attempts; try again later', undefined, {
      'Retry-After': String(deps.policy.windowSeconds),
    });
  };
  const addressAttempt = async (ctx: ApiContext) => {
    const ip = deps.clientIp(ctx);
    if (!(await quota.take(`operator-sign-in-ip:${ip}`)).allowed) throw await refuse(`ip:${ip}`, 'sign-in attempts from one address');
  };
  return {
    addressAttempt,
    async signInAttempt(ctx, email) {
      await addressAttempt(ctx);
      const who = email.trim().toLowerCase().slice(0, 254);
      if (!(await quota.take(`operator-sign-in-email:${who}`)).allowed)
        throw await refuse(`email:${who}`, 'sign-in attempts for one email');
    },
    async tokenFailure(ctx) {
      const ip = deps.clientIp(ctx);
      if (!(await quota.take(`operator-token-ip:${ip}`)).allowed)
        throw await refuse(`ip:${ip}`, 'failed admin API tokens from one address');
    },
  };
}

/** `Authorization: Bearer <operator token>` on the admin API: the operator it belongs to, or 401 (counted). */
export function operatorAuth(prisma: PrismaClient, throttle: OperatorThrottle): ApiMiddleware {
  return async (ctx, next) => {
    const presented = bearerOf(ctx);
    const operator = presented ? await operatorOfToken(prisma, presented) : null;
    if (!operator) {
      await throttle.tokenFailure(ctx);
      throw unauthorized('operator token');
    }
    ctx.state.operator = operator;
    await next();
  };
}

/** The signed-in operator must hold `role` (or a higher one). */
export function requireRole(role: OperatorRole): ApiMiddleware {
  return async (ctx, next) => {
    const operator = ctx.state.operator;
    if (!operator || !hasRole(operator.role, role))
      throw new ApiError('forbidden', `This needs the ${role} role; you are ${operator?.role ?? 'not signed in'}`);
    await next();
  };
}

/** Prometheus's read-only credential: METRICS_TOKEN, compared in constant time (both sides hashed first). */
export function metricsAuth(token: string): ApiMiddleware {
  const expected = sha256Hex(token);
  return async (ctx, next) => {
    const presented = bearerOf(ctx);
    if (!presented || !safeEqual(sha256Hex(presented), expected)) throw unauthorized('METRICS_TOKEN');
    await next();
  };
}
