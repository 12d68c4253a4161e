import { ApiError } from '../../domain/requests/errors';
import { safeEqual, sha256Hex } from '../../platform/secrets';
import type { ApiMiddleware } from '../context';

/**
 * Whether a presented string is the ADMIN_API_TOKEN. Hashing both sides first makes the comparison
 * constant-time whatever the presented length. The admin API's Bearer check and the operator
 * console's sign-in both use it.
 */
export function adminTokenMatcher(token: string): (presented: string) => boolean {
  const expected = sha256Hex(token);
  return (presented) => safeEqual(sha256Hex(presented), expected);
}

/** `Authorization: Bearer <ADMIN_API_TOKEN>` on the operator admin API, /metrics included. */
export function adminAuth(token: string): ApiMiddleware {
  const matches = adminTokenMatcher(token);
  return async (ctx, next) => {
    const match = /^Bearer ([\x21-\x7e]+)$/.exec(ctx.get('Authorization'));
    if (!match?.[1] || !matches(match[1])) {
      throw new ApiError('unauthorized', 'Admin authentication required: Authorization: Bearer <ADMIN_API_TOKEN>', undefined, {
        'WWW-Authenticate': 'Bearer realm="partner-payments-admin"',
      });
    }
    await next();
  };
}
