import { z } from 'zod';
import type { PrismaClient } from '../../db/client';
import { ENVIRONMENTS, type EnvironmentName } from '../../config/environments';
import { ApiError } from '../requests/errors';
import { newId, randomToken } from '../values/ids';
import { hashSecret, safeEqual } from '../../platform/secrets';
import { LruCache } from '../../custody/lru';

export const SCOPES = ['v2:accounts', 'v2:deposit_addresses', 'v2:payments', 'v2:vaults'] as const;
export type Scope = (typeof SCOPES)[number];

/** 403 forbidden when the app's credential lacks the scope: the one scope check, for Basic and client tokens alike. */
export function assertScope(app: { scopes: readonly Scope[] }, scope: Scope): void {
  if (!app.scopes.includes(scope)) throw new ApiError('forbidden', `This credential lacks the ${scope} scope`, { requiredScope: scope });
}

export const ZCreateApp = z.object({
  name: z.string().min(1).max(120),
  environment: z.enum(ENVIRONMENTS),
  scopes: z
    .array(z.enum(SCOPES))
    .min(1)
    .default([...SCOPES]),
});
export type TCreateApp = z.input<typeof ZCreateApp>;

export interface AppCredential {
  appId: string;
  appSecret: string;
  environment: EnvironmentName;
  scopes: Scope[];
}

export interface AuthenticatedApp {
  id: string;
  name: string;
  environment: EnvironmentName;
  scopes: Scope[];
  apiVersion: string;
}

/** A new secret of the environment's shape: `sk_test_...` (sandbox) or `sk_live_...` (production). */
export function newAppSecret(environment: EnvironmentName): string {
  return `sk_${environment === 'sandbox' ? 'test' : 'live'}_${randomToken(43)}`;
}

/** Creates an app and returns its secret; only the secret's hash is stored. */
export async function createApp(prisma: PrismaClient, input: TCreateApp, apiVersion: string): Promise<AppCredential> {
  const data = ZCreateApp.parse(input);
  const appId = newId('app');
  const appSecret = newAppSecret(data.environment);
  await prisma.app.create({
    data: {
      id: appId,
      name: data.name,
      environment: data.environment,
      scopes: data.scopes,
      apiVersion,
      secrets: { create: { secretHash: hashSecret(appSecret) } },
    },
  });
  return { appId, appSecret, environment: data.environment, scopes: data.scopes };
}

// Compared against when the app id is unknown, so a miss costs the same as a wrong secret.
const DUMMY_HASH = hashSecret('not-a-real-secret');

/** A verified credential and until when its secret is honoured (null: until a rotation or revocation). */
interface VerifiedCredential {
  app: AuthenticatedApp;
  secretExpiresAt: Date | null;
}

/**
 * Checks the presented secret against every live secret of the app (the current one, and previous
 * ones inside their overlap window), each in constant time and all of them every time. A revoked app
 * matches none.
 */
async function verifyCredential(
  prisma: PrismaClient,
  appId: string,
  appSecret: string,
  now = new Date(),
): Promise<VerifiedCredential | null> {
  const app =
    appId.length <= 64
      ? await prisma.app.findUnique({
          where: { id: appId },
          include: { secrets: { where: { OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] } } },
        })
      : null;
  const presented = hashSecret(appSecret);
  const candidates = app && !app.revokedAt && app.secrets.length > 0 ? app.secrets : [{ secretHash: DUMMY_HASH, expiresAt: null }];
  let matched: { expiresAt: Date | null } | undefined;
  for (const candidate of candidates) {
    if (safeEqual(presented, candidate.secretHash) && candidate.secretHash !== DUMMY_HASH) matched = candidate;
  }
  if (!app || !matched) return null;
  return {
    app: {
      id: app.id,
      name: app.name,
      environment: app.environment as EnvironmentName,
      scopes: app.scopes as Scope[],
      apiVersion: app.apiVersion,
    },
    secretExpiresAt: matched.expiresAt,
  };
}

export async function authenticateApp(prisma: PrismaClient, appId: string, appSecret: string): Promise<AuthenticatedApp | null> {
  return (await verifyCredential(prisma, appId, appSecret))?.app ?? null;
}

export type AppAuthenticator = (appId: string, appSecret: string) => Promise<AuthenticatedApp | null>;

/** Credentials remembered per API process (a bound on memory, not on correctness). */
const MAX_CACHED_CREDENTIALS = 10_000;

/**
 * authenticateApp behind an in-process cache that a feed of credential changes keeps honest: every
 * change to an app or its secrets (a rotation, a revocation) reaches each process as a PostgreSQL
 * NOTIFY (src/runtime/credential-changes.ts), which calls `forget(appId)`. While that feed is down
 * (`setLive(false)`, and before it first connects) nothing is cached, so a change is never missed.
 */
export interface AppCredentialCache {
  authenticate: AppAuthenticator;
  forget(appId: string): void;
  setLive(live: boolean): void;
}

/**
 * Keyed by the app id and the secret's hash, so the cache holds no secret; only successes are kept, so
 * a wrong secret is always checked against the database. An entry lasts `ttlMs` at most, and never
 * past its secret's overlap window. A read that was in flight when a change arrived is not cached.
 */
export function appCredentialCache(prisma: PrismaClient, ttlMs: number): AppCredentialCache {
  const cache = new LruCache<string, { verified: VerifiedCredential; until: number }>(MAX_CACHED_CREDENTIALS);
  let live = false;
  let changes = 0;
  return {
    async authenticate(appId, appSecret) {
      const key = `${appId}:${hashSecret(appSecret)}`;
      const hit = live ? cache.get(key) : undefined;
      if (hit && hit.until > Date.now()) return hit.verified.app;
      const seen = changes;
      const verified = await verifyCredential(prisma, appId, appSecret);
      if (verified && live && seen === changes && ttlMs > 0) {
        const until = Math.min(Date.now() + ttlMs, verified.secretExpiresAt?.getTime() ?? Infinity);
        cache.set(key, { verified, until });
      }
      return verified?.app ?? null;
    },
    forget(appId) {
      changes += 1;
      for (const key of cache.keys()) if (key.startsWith(`${appId}:`)) cache.delete(key);
    },
    setLive(next) {
      changes += 1;
      live = next;
      cache.clear();
    },
  };
}
