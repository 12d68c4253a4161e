import { assertScope, type AppAuthenticator, type Scope } from '../../domain/apps/apps';
import type { ApiMiddleware } from '../context';
import { ApiError } from '../../domain/requests/errors';
import { timed } from '../../platform/step-timing';
import type { CredentialCheckLimit } from './rate-limit';

const CHALLENGE = { 'WWW-Authenticate': 'Basic realm="partner-payments", charset="UTF-8"' };

function unauthorized(message: string): ApiError {
  return new ApiError('unauthorized', message, undefined, CHALLENGE);
}

const unlimited: CredentialCheckLimit = (_ctx, _appId, check) => check();

/**
 * HTTP Basic: username is the app id, password is the app secret. `limit` runs each check (the
 * failed logins of the client's address for that app): a failure past it is 429, never a success.
 */
export function authenticate(authenticateApp: AppAuthenticator, limit: CredentialCheckLimit = unlimited): ApiMiddleware {
  return async (ctx, next) => {
    const header = ctx.get('Authorization');
    const match = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header);
    if (!match?.[1]) throw unauthorized('Authentication required: use HTTP Basic with your app id and app secret');
    const decoded = Buffer.from(match[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon <= 0) throw unauthorized('Invalid credentials');
    const appId = decoded.slice(0, colon);
    const app = await timed('auth', () => limit(ctx, appId, () => authenticateApp(appId, decoded.slice(colon + 1))));
    if (!app) throw unauthorized('Invalid credentials');
    ctx.state.app = app;
    ctx.state.authenticated = true;
    await next();
  };
}

/** 403 forbidden when the credential lacks the endpoint's scope. */
export function requireScope(scope: Scope): ApiMiddleware {
  return async (ctx, next) => {
    assertScope(ctx.state.app ?? { scopes: [] }, scope);
    await next();
  };
}
