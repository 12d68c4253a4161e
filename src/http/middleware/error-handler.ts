import type { ApiMiddleware } from '../context';
import { ApiError, UpstreamFailure } from '../../domain/requests/errors';
import { upstreamCode, upstreamFamily, type UpstreamFamily, type UpstreamKind } from '../upstream-codes';
import { classifyFailure, type FailureClass } from '../../domain/requests/failure-classes';

/** Seconds a caller waits before retrying a 503: our own capacity frees up fast, an upstream's outage less so. */
const RETRY_AFTER_SECONDS = { capacity: 1, unreachable: 5 } as const;

/** Maps every failure, expected or not, to the spec's error envelope. Internals never leak. */
export function errorHandler(): ApiMiddleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body == null) {
        throw new ApiError('not_found', `No route for ${ctx.method} ${ctx.path}`);
      }
    } catch (err) {
      const apiError = toApiError(err, upstreamFamily(ctx.path));
      if (!(err instanceof ApiError)) {
        // An upstream's failure, or the service being away, is not a bug: a warning each.
        const level = apiError.code === 'internal_error' ? 'error' : 'warn';
        ctx.state.log[level]({ err, code: apiError.code }, 'unexpected error');
      }
      ctx.status = apiError.status;
      for (const [name, value] of Object.entries(apiError.headers)) ctx.set(name, value);
      // Every 503 says when to come back, whoever raised it.
      if (apiError.status === 503 && !ctx.response.get('Retry-After')) ctx.set('Retry-After', String(RETRY_AFTER_SECONDS.capacity));
      ctx.body = apiError.toBody();
    }
  };
}

function toApiError(err: unknown, family: UpstreamFamily): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof UpstreamFailure) return upstreamError(family, err.kind, err.message, err.details, err.retryAfterSeconds);
  return fromUnexpected(err, family);
}

/** An upstream's failure in the endpoint's family of codes (src/http/upstream-codes.ts). */
function upstreamError(
  family: UpstreamFamily,
  kind: UpstreamKind,
  message: string,
  details?: unknown,
  retryAfterSeconds?: number,
): ApiError {
  const headers: Record<string, string> =
    kind === 'unavailable' ? { 'Retry-After': String(retryAfterSeconds ?? RETRY_AFTER_SECONDS.unreachable) } : {};
  return new ApiError(upstreamCode(family, kind), message, details, headers);
}

function fromUnexpected(err: unknown, family: UpstreamFamily): ApiError {
  // First: an upstream's error may carry the upstream's HTTP status (viem's HttpRequestError does),
  // which is not the client's fault.
  const failure = classifyFailure(err);
  if (failure) return fromFailure(failure, family);
  // Koa and its body readers raise errors with an HTTP status for client faults.
  const status = typeof err === 'object' && err !== null && 'status' in err ? Number(err.status) : 500;
  if (status === 413) return new ApiError('payload_too_large', 'Request body is too large');
  if (status === 415) return new ApiError('unsupported_media_type', 'Request body must be application/json');
  if (status === 400) return new ApiError('bad_request', 'Malformed request');
  return new ApiError('internal_error', 'An unexpected error occurred');
}

/** 503: this process is full (its database pool, or its admission gate); nothing was done. */
export const atCapacity = () =>
  new ApiError('service_unavailable', 'The service is at capacity; retry after the Retry-After interval', undefined, {
    'Retry-After': String(RETRY_AFTER_SECONDS.capacity),
  });

const UPSTREAM_NAME = { temporal: 'The workflow engine', chain: 'The chain RPC provider' } as const;

/** The table in docs/decisions/api-conventions.md "Overload and upstream failures". */
function fromFailure(failure: FailureClass, family: UpstreamFamily): ApiError {
  if (failure.kind === 'capacity') return atCapacity();
  const what = UPSTREAM_NAME[failure.source];
  if (failure.kind === 'unreachable') {
    return upstreamError(
      family,
      'unavailable',
      `${what} is unavailable; retry after the Retry-After interval with the same Idempotency-Key`,
    );
  }
  return upstreamError(family, 'error', `${what} answered with an error; retry with backoff and the same Idempotency-Key`);
}
