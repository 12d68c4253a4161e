import { z } from 'zod';
import type { Prisma } from '../../db/client';
import type { EnvironmentName } from '../../config/environments';
import { newAppSecret } from './apps';
import { ApiError, notFound } from '../requests/errors';
import { hashSecret } from '../../platform/secrets';

/**
 * Rotating and revoking an app's credential (docs/decisions/accounts-and-auth.md "Rotating and revoking credentials").
 * A rotation issues a new secret (shown once, stored hashed) and lets the previous ones keep working
 * until the overlap window ends, as Stripe's rolled keys do; a revocation refuses every secret and
 * client token of the app at once. Each API process hears of either through the app_credentials
 * NOTIFY (src/runtime/credential-changes.ts). Operators reach these only through
 * src/domain/operators/operator-actions.ts, which audits them.
 */
export const DEFAULT_OVERLAP_SECONDS = 24 * 60 * 60;
export const MAX_OVERLAP_SECONDS = 7 * 24 * 60 * 60;

export const ZAppIdInput = z
  .string()
  .regex(/^app_[A-Za-z0-9]+$/, 'an app id (app_...)')
  .max(64);
const ZActor = z.string().trim().min(1).max(200);
const ZReason = z.string().trim().min(1).max(500);

export const ZRotateAppSecret = z.strictObject({
  actor: ZActor,
  reason: ZReason.optional(),
  overlapSeconds: z.number().int().min(0).max(MAX_OVERLAP_SECONDS).default(DEFAULT_OVERLAP_SECONDS),
});
export type TRotateAppSecret = z.input<typeof ZRotateAppSecret>;

export const ZRevokeApp = z.strictObject({ actor: ZActor, reason: ZReason.optional() });
export type TRevokeApp = z.input<typeof ZRevokeApp>;

export interface RotatedAppSecret {
  appId: string;
  appSecret: string;
  environment: EnvironmentName;
  /** Until when the secrets issued before this rotation are honoured. */
  previousSecretsExpireAt: string;
}

export interface RevokedApp {
  appId: string;
  revokedAt: string;
}

type Tx = Prisma.TransactionClient;

async function lockApp(tx: Tx, appId: string) {
  const rows = await tx.$queryRaw<Array<{ id: string }>>`SELECT "id" FROM "apps" WHERE "id" = ${appId} FOR UPDATE`;
  if (rows.length === 0) throw notFound('App');
  return tx.app.findUniqueOrThrow({ where: { id: appId } });
}

/** A new current secret; every older live secret now ends at `now + overlapSeconds` at the latest. */
export async function rotateAppSecret(tx: Tx, appId: string, overlapSeconds: number, now = new Date()): Promise<RotatedAppSecret> {
  const app = await lockApp(tx, appId);
  if (app.revokedAt)
    throw new ApiError('conflict', 'The app is revoked; its credential cannot be rotated', {
      appId,
      revokedAt: app.revokedAt.toISOString(),
    });
  const endsAt = new Date(now.getTime() + overlapSeconds * 1000);
  await tx.appSecret.updateMany({
    where: { appId, OR: [{ expiresAt: null }, { expiresAt: { gt: endsAt } }] },
    data: { expiresAt: endsAt },
  });
  const appSecret = newAppSecret(app.environment as EnvironmentName);
  await tx.appSecret.create({ data: { appId, secretHash: hashSecret(appSecret), createdAt: now } });
  return { appId, appSecret, environment: app.environment as EnvironmentName, previousSecretsExpireAt: endsAt.toISOString() };
}

/** Refuses the app's every secret and client token from now on; revoking a revoked app answers its first revocation. */
export async function revokeApp(tx: Tx, appId: string, now = new Date()): Promise<RevokedApp> {
  const app = await lockApp(tx, appId);
  if (app.revokedAt) return { appId, revokedAt: app.revokedAt.toISOString() };
  await tx.app.update({ where: { id: appId }, data: { revokedAt: now } });
  return { appId, revokedAt: now.toISOString() };
}
