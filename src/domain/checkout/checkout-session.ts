import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { PrismaClient } from '../../db/client';
import { ApiError } from '../requests/errors';
import { verifyClientToken, type ClientPrincipal, CLIENT_TOKEN_LIFETIME_SECONDS } from '../client-auth/access-tokens';
import { loadPayable } from '../payments/client-payments';
import { verifyClientSecret } from '../payments/payment-view';
import { openSealedText, sealText } from '../keys/sealed-text';
import { safeEqual } from '../../platform/secrets';
import type { TCheckoutSessionRequest } from './checkout-view.schemas';
import type { ServiceSecret } from '../keys/service-keys';

/**
 * The payer's session on the hosted checkout: what the partner's front end handed over in a POST body
 * (the client token and the payment secret), verified like the client API does, then kept sealed
 * (AES-GCM, owner = the Payment id) in an HttpOnly cookie named by the Payment. It holds the
 * client token, so every use verifies the token again (expiry, revocation); the payment secret is
 * not kept: the session exists only because it was shown once.
 */
const LABEL = 'checkout-session:v1';

const ZSealed = z.strictObject({ token: z.string(), csrf: z.string(), exp: z.number().int() });

export interface CheckoutSession {
  principal: ClientPrincipal;
  /** Sent back by the page with every state-changing request (X-CSRF-Token). */
  csrf: string;
}

export interface CheckoutSessionDeps {
  prisma: PrismaClient;
  serviceSecret: ServiceSecret;
}

function unauthorized(message: string): ApiError {
  return new ApiError('unauthorized', message);
}

/**
 * POST /checkout/{paymentId}/session: the same checks as the client API (payment secret first, in
 * constant time, then the bearer token, then the Payment as a receive Payment of the token's app whose
 * payer is, or now becomes, the token's account).
 * Answers the sealed cookie value and how long it lives (the token's lifetime at most, and never past
 * the Payment's expiry plus that lifetime: the page still shows the outcome after it).
 */
export async function openCheckoutSession(
  deps: CheckoutSessionDeps,
  paymentId: string,
  input: TCheckoutSessionRequest,
  now = new Date(),
): Promise<{ sealed: string; maxAgeSeconds: number }> {
  if (!verifyClientSecret(deps.serviceSecret, paymentId, input.clientSecret)) {
    throw unauthorized('clientSecret does not match this Payment');
  }
  const principal = await verifyClientToken(deps.prisma, deps.serviceSecret, input.clientToken);
  if (!principal) throw unauthorized('clientToken is not a valid client access token');
  // Opening a session is the payer's read of the Payment: it binds the payer as the client read does.
  await loadPayable(deps.prisma, principal, paymentId, 'claim');
  const maxAgeSeconds = CLIENT_TOKEN_LIFETIME_SECONDS;
  const exp = Math.floor(now.getTime() / 1000) + maxAgeSeconds;
  const csrf = randomBytes(18).toString('base64url');
  return { sealed: sealText(deps.serviceSecret, LABEL, paymentId, JSON.stringify({ token: input.clientToken, csrf, exp })), maxAgeSeconds };
}

/** The session the cookie holds for this Payment, or null (none, tampered, another Payment's, expired, token no longer valid). */
export async function readCheckoutSession(
  deps: CheckoutSessionDeps,
  paymentId: string,
  cookie: string | undefined,
  now = new Date(),
): Promise<CheckoutSession | null> {
  if (!cookie || cookie.length > 8192) return null;
  const opened = openSealedText(deps.serviceSecret, LABEL, paymentId, cookie);
  if (opened instanceof Error) return null;
  let parsed: z.infer<typeof ZSealed>;
  try {
    parsed = ZSealed.parse(JSON.parse(opened));
  } catch {
    return null;
  }
  if (parsed.exp * 1000 <= now.getTime()) return null;
  const principal = await verifyClientToken(deps.prisma, deps.serviceSecret, parsed.token);
  return principal ? { principal, csrf: parsed.csrf } : null;
}

/** A state-changing request must carry the session's CSRF token (a header a cross-site form can't set). */
export function assertCsrf(session: CheckoutSession, presented: string | undefined): void {
  if (!presented || !safeEqual(session.csrf, presented)) {
    throw new ApiError('forbidden', 'The checkout session token (X-CSRF-Token) is missing or wrong', { reasonCode: 'csrf_token_mismatch' });
  }
}
