import type { ApiMiddleware } from '../context';
import { ApiError } from '../../domain/errors';

/** Maps every failure, expected or not, to the spec's error envelope. Internals never leak. */
export function errorHandler(): ApiMiddleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body == null) {
        throw new ApiError('not_found', `No route for ${ctx.method} ${ctx.path}`);
      }
    } catch (err) {
      const apiError = err instanceof ApiError ? err : fromUnexpected(err);
      if (!(err instanceof ApiError)) {
        ctx.state.log.error({ err }, 'unexpected error');
      }
      ctx.status = apiError.status;
      for (const [name, value] of Object.entries(apiError.headers)) ctx.set(name, value);
      ctx.body = apiError.toBody();
    }
  };
}

function fromUnexpected(err: unknown): ApiError {
  // Koa and its body readers raise errors with an HTTP status for client faults.
  const status = typeof err === 'object' && err !== null && 'status' in err ? Number(err.status) : 500;
  if (status === 413) return new ApiError('payload_too_large', 'Request body is too large');
  if (status === 415) return new ApiError('unsupported_media_type', 'Request body must be application/json');
  if (status === 400) return new ApiError('bad_request', 'Malformed request');
  return new ApiError('internal_error', 'An unexpected error occurred');
}
