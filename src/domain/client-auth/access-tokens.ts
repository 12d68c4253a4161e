import { decodeProtectedHeader, errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { PrismaClient } from '../../db/client';
import type { AuthenticatedApp, Scope } from '../apps/apps';
import type { EnvironmentName } from '../../config/environments';
import { ApiError, notFound } from '../requests/errors';
import { randomToken } from '../values/ids';
import { deriveKey } from '../../platform/secrets';
import { currentKey, keyById, keyIdOf, type ServiceSecret } from '../keys/service-keys';
import { ZClientTokenClaims, type TClientAccountRef } from './client-auth.schemas';

/** Short enough that a leaked token is worth little; the partner's backend exchanges again. */
export const CLIENT_TOKEN_LIFETIME_SECONDS = 15 * 60;
const ISSUER = 'partner-payments';
const AUDIENCE = 'client-api';
/** Distinct from the clientSecret's and the cursors' labels: one key per purpose. */
const KEY_LABEL = 'client-access-token:v1';

/** The signing key of new tokens: derived from the keyring's current key. */
export function clientTokenKey(serviceSecret: ServiceSecret): Uint8Array {
  return deriveKey(currentKey(serviceSecret), KEY_LABEL);
}

/**
 * The key a token names (its `kid`: the id of the service key it was signed under, any accepted one);
 * a token without one (issued before keys had ids) is checked under the current key.
 */
function verifyingKey(serviceSecret: ServiceSecret, token: string): Uint8Array | null {
  let kid: unknown;
  try {
    ({ kid } = decodeProtectedHeader(token));
  } catch {
    return null;
  }
  const secret = kid === undefined ? currentKey(serviceSecret) : typeof kid === 'string' ? keyById(serviceSecret, kid) : undefined;
  return secret === undefined ? null : deriveKey(secret, KEY_LABEL);
}

/** Who a verified client token speaks for: one account of one app in one environment. */
export interface ClientPrincipal {
  app: AuthenticatedApp;
  accountId: string;
  tokenId: string;
}

async function findAccount(prisma: PrismaClient, appId: string, ref: TClientAccountRef) {
  const account =
    'accountId' in ref
      ? await prisma.account.findFirst({ where: { id: ref.accountId, appId } })
      : await prisma.account.findUnique({ where: { appId_externalUserId: { appId, externalUserId: ref.externalUserId } } });
  if (!account) throw notFound('Account');
  if (account.status !== 'active') throw new ApiError('forbidden', 'The account is not active', { reasonCode: 'account_not_active' });
  return account;
}

async function generationOf(prisma: PrismaClient, accountId: string): Promise<number> {
  const row = await prisma.clientTokenGeneration.findUnique({ where: { accountId } });
  return row?.generation ?? 0;
}

/** POST /v2/client/auth/exchange: a token bound to the app, its environment and one of its accounts. */
export async function exchangeClientToken(
  prisma: PrismaClient,
  serviceSecret: ServiceSecret,
  app: AuthenticatedApp,
  ref: TClientAccountRef,
  now = new Date(),
) {
  const account = await findAccount(prisma, app.id, ref);
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + CLIENT_TOKEN_LIFETIME_SECONDS;
  const accessToken = await new SignJWT({ app: app.id, env: app.environment, gen: await generationOf(prisma, account.id) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: keyIdOf(currentKey(serviceSecret)) })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(account.id)
    .setJti(`ctok_${randomToken(22)}`)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(clientTokenKey(serviceSecret));
  return {
    accessToken,
    tokenType: 'Bearer' as const,
    expiresAt: new Date(exp * 1000).toISOString(),
    expiresIn: CLIENT_TOKEN_LIFETIME_SECONDS,
    accountId: account.id,
  };
}

/** POST /v2/client/auth/revoke: every token issued to the account so far is refused from now on. */
export async function revokeClientTokens(prisma: PrismaClient, app: AuthenticatedApp, ref: TClientAccountRef, now = new Date()) {
  const account = await findAccount(prisma, app.id, ref);
  await prisma.clientTokenGeneration.upsert({
    where: { accountId: account.id },
    create: { accountId: account.id, generation: 1, revokedAt: now },
    update: { generation: { increment: 1 }, revokedAt: now },
  });
  return { accountId: account.id, revokedAt: now.toISOString() };
}

/**
 * The principal of a client token, or null for any token that is not one we issued and still honour:
 * bad signature or algorithm, expired, other audience or issuer, unknown claims, an app, environment
 * or account that no longer match, a revoked app, or a generation a revoke has passed.
 */
export async function verifyClientToken(
  prisma: PrismaClient,
  serviceSecret: ServiceSecret,
  token: string,
): Promise<ClientPrincipal | null> {
  // base64url lets several strings decode to one signature (the last character's spare bits): only
  // the canonical one, the one we issued, is accepted, so altering any character of a token refuses it.
  const signature = token.slice(token.lastIndexOf('.') + 1);
  if (Buffer.from(signature, 'base64url').toString('base64url') !== signature) return null;
  const key = verifyingKey(serviceSecret, token);
  if (!key) return null;
  let payload: unknown;
  try {
    ({ payload } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer: ISSUER, audience: AUDIENCE, typ: 'JWT' }));
  } catch (err) {
    if (err instanceof joseErrors.JOSEError || err instanceof TypeError) return null;
    throw err;
  }
  const claims = ZClientTokenClaims.safeParse(payload);
  if (!claims.success) return null;
  const { sub, app: appId, env, gen, jti } = claims.data;
  const account = await prisma.account.findFirst({ where: { id: sub, appId }, include: { app: true } });
  if (!account || account.status !== 'active' || account.app.environment !== env || account.app.revokedAt) return null;
  if ((await generationOf(prisma, account.id)) !== gen) return null;
  const { app } = account;
  return {
    app: {
      id: app.id,
      name: app.name,
      environment: app.environment as EnvironmentName,
      scopes: app.scopes as Scope[],
      apiVersion: app.apiVersion,
    },
    accountId: account.id,
    tokenId: jti,
  };
}
