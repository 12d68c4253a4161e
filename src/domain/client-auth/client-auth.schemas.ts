import { z } from 'zod';
import { ZAccountId } from '../accounts/account.schemas';

/** Exactly one of accountId and externalUserId names the account the token is bound to. */
export const ZClientAccountRef = z.union([
  z.strictObject({ accountId: ZAccountId }),
  z.strictObject({ externalUserId: z.string().min(1).max(128) }),
]);
export type TClientAccountRef = z.output<typeof ZClientAccountRef>;

export const ZClientTokenResponse = z.strictObject({
  accessToken: z.string(),
  tokenType: z.literal('Bearer'),
  expiresAt: z.iso.datetime(),
  expiresIn: z.number().int().positive(),
  accountId: ZAccountId,
});

export const ZClientTokenRevokeResponse = z.strictObject({
  accountId: ZAccountId,
  revokedAt: z.iso.datetime(),
});

/** The claims of a client access token, checked after the signature (anything else is refused). */
export const ZClientTokenClaims = z.strictObject({
  iss: z.literal('partner-payments'),
  aud: z.literal('client-api'),
  sub: ZAccountId,
  app: z.string().min(1).max(64),
  env: z.string().min(1).max(32),
  gen: z.number().int().min(0),
  jti: z.string().min(1).max(64),
  iat: z.number().int(),
  exp: z.number().int(),
});
