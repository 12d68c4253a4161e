import type { ApiMiddleware } from '../context';
import { ApiError } from '../../domain/requests/errors';

export const SVC_VERSION_HEADER = 'Svc-Version';

/** Echoes Svc-Version on every response, errors included: the app's pin once known, else the current one. */
export function echoSvcVersion(currentVersion: string): ApiMiddleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      ctx.set(SVC_VERSION_HEADER, ctx.state.app?.apiVersion ?? currentVersion);
    }
  };
}

/**
 * A sent Svc-Version must equal the app environment's pin. Omitted, the pin applies. Runs after
 * authentication, because the pin belongs to the credential's environment.
 */
export function enforceSvcVersion(supportedVersions: readonly string[]): ApiMiddleware {
  return async (ctx, next) => {
    // Sent empty is sent: only an omitted header means "the pin".
    const sent = ctx.headers[SVC_VERSION_HEADER.toLowerCase()] !== undefined;
    const requested = ctx.get(SVC_VERSION_HEADER);
    const pinned = ctx.state.app?.apiVersion;
    if (sent && pinned && requested !== pinned) {
      throw new ApiError(
        'api_version_mismatch',
        `Svc-Version ${requested.slice(0, 32)} does not match this environment's pinned version ${pinned}`,
        { requestedVersion: requested.slice(0, 32), pinnedVersion: pinned, supportedApiVersions: supportedVersions },
      );
    }
    await next();
  };
}
