import type { ClientPrincipal } from '../../domain/client-auth/access-tokens';
import { ApiError } from '../../domain/requests/errors';
import { verifyClientSecret } from '../../domain/payments/payment-view';
import type { ApiContext, ApiMiddleware } from '../context';
import type { ServiceSecret } from '../../domain/keys/service-keys';

const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="partner-payments-client"' };
/** A compact JWS, bounded: nothing longer was ever issued. */
const BEARER = /^Bearer ([A-Za-z0-9_-]{1,1024}\.[A-Za-z0-9_-]{1,2048}\.[A-Za-z0-9_-]{1,512})$/i;
/** clientSecretFor's shape; anything else is refused before any hashing. */
const PAYMENT_SECRET = /^payment_[A-Za-z0-9_-]{1,64}_secret_[0-9a-f]{40}$/;

function unauthorized(message: string): ApiError {
  return new ApiError('unauthorized', message, undefined, CHALLENGE);
}

/**
 * Client API: `Authorization: Bearer <token>` from POST /v2/client/auth/exchange. Partner Basic
 * credentials are refused here, as a client token is refused on partner routes (they only read Basic).
 * Every refusal is the same 401, so a caller learns nothing about why.
 */
export function clientBearer(verify: (token: string) => Promise<ClientPrincipal | null>): ApiMiddleware {
  return async (ctx, next) => {
    const match = BEARER.exec(ctx.get('Authorization'));
    const principal = match?.[1] ? await verify(match[1]) : null;
    if (!principal) throw unauthorized('Authentication required: use a Bearer access token from POST /v2/client/auth/exchange');
    ctx.state.client = principal;
    ctx.state.app = principal.app;
    ctx.state.authenticated = true;
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
}

/**
 * X-Svc-Payment-Secret is the Payment's checkout.clientSecret: compared in constant time with the one
 * derived for the path's (already validated) Payment id, before the Payment is read, so a wrong
 * secret costs no query and says nothing about whether the Payment exists.
 */
export function assertPaymentSecret(ctx: ApiContext, serviceSecret: ServiceSecret, paymentId: string): void {
  const secret = ctx.get('X-Svc-Payment-Secret');
  if (!PAYMENT_SECRET.test(secret) || !verifyClientSecret(serviceSecret, paymentId, secret)) {
    throw unauthorized('X-Svc-Payment-Secret is missing or does not match this Payment');
  }
}
