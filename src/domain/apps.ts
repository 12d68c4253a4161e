import { z } from 'zod';
import type { PrismaClient } from '../db/client';
import { ENVIRONMENTS, type EnvironmentName } from '../config/environments';
import { ApiError } from './errors';
import { newId, randomToken } from './ids';
import { hashSecret, safeEqual } from './secrets';
import { LruCache } from '../custody/lru';

export const SCOPES = ['v2:accounts', 'v2:deposit_addresses', 'v2:payments', 'v2:vaults'] as const;
export type Scope = (typeof SCOPES)[number];

/** 403 forbidden when the app's credential lacks the scope: the one scope check, for Basic and client tokens alike. */
export function assertScope(app: { scopes: readonly Scope[] }, scope: Scope): void {
  if (!app.scopes.includes(scope)) throw new ApiError('forbidden', `This credential lacks the ${scope} scope`, { requiredScope: scope });
}

export const ZCreateApp = z.object({
  name: z.string().min(1).max(120),
  environment: z.enum(ENVIRONMENTS),
  scopes: z.array(z.enum(SCOPES)).min(1).default([...SCOPES]),
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

/** Creates an app and returns its secret; only the secret's hash is stored. */
export async function createApp(
  prisma: PrismaClient,
  input: TCreateApp,
  apiVersion: string,
): Promise<AppCredential> {
  const data = ZCreateApp.parse(input);
  const appId = newId('app');
  const appSecret = `sk_${data.environment === 'sandbox' ? 'test' : 'live'}_${randomToken(43)}`;
  await prisma.app.create({
    data: {
      id: appId,
      name: data.name,
      environment: data.environment,
      scopes: data.scopes,
      secretHash: hashSecret(appSecret),
      apiVersion,
    },
  });
  return { appId, appSecret, environment: data.environment, scopes: data.scopes };
}

// Compared against when the app id is unknown, so a miss costs the same as a wrong secret.
const DUMMY_HASH = hashSecret('not-a-real-secret');

export async function authenticateApp(
  prisma: PrismaClient,
  appId: string,
  appSecret: string,
): Promise<AuthenticatedApp | null> {
  const app = appId.length <= 64 ? await prisma.app.findUnique({ where: { id: appId } }) : null;
  const ok = safeEqual(hashSecret(appSecret), app?.secretHash ?? DUMMY_HASH);
  if (!app || !ok) return null;
  return {
    id: app.id,
    name: app.name,
    environment: app.environment as EnvironmentName,
    scopes: app.scopes as Scope[],
    apiVersion: app.apiVersion,
  };
}

export type AppAuthenticator = (appId: string, appSecret: string) => Promise<AuthenticatedApp | null>;

/** Credentials remembered per API process (a bound on memory, not on correctness). */
const MAX_CACHED_CREDENTIALS = 10_000;

/**
 * authenticateApp behind a short-lived in-process cache: a credential verified within `ttlMs` is
 * trusted without reading the app again. Keyed by the app id and the secret's hash, so the cache
 * holds no secret; only successes are kept, so a wrong secret is always checked against the database.
 * Apps are never changed after creation today; a future rotation or revocation takes effect within
 * `ttlMs` in every process.
 */
export function cachedAppAuthenticator(prisma: PrismaClient, ttlMs: number): AppAuthenticator {
  if (ttlMs <= 0) return (appId, appSecret) => authenticateApp(prisma, appId, appSecret);
  const cache = new LruCache<string, { app: AuthenticatedApp; until: number }>(MAX_CACHED_CREDENTIALS);
  return async (appId, appSecret) => {
    const key = `${appId}:${hashSecret(appSecret)}`;
    const hit = cache.get(key);
    if (hit && hit.until > Date.now()) return hit.app;
    const app = await authenticateApp(prisma, appId, appSecret);
    if (app) cache.set(key, { app, until: Date.now() + ttlMs });
    return app;
  };
}
