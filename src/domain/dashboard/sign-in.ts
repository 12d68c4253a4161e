import { randomInt } from 'node:crypto';
import type { PrismaClient } from '../../db/client';
import type { Mailer } from '../../mail/mailer';
import { newId } from '../values/ids';
import { hmacHex, safeEqual } from '../../platform/secrets';
import { currentKey, type ServiceSecret } from '../keys/service-keys';
import { membershipsOf } from './partner-users';

/**
 * Sign-in by emailed one-time code. The code is 6 digits, good for 10 minutes and one use, stored only
 * as an HMAC under a key of its own. Throttled per email, in PostgreSQL so every API process agrees:
 * at most 5 codes per 15 minutes, 5 wrong guesses spend a code, and 20 wrong guesses in all (a running
 * total a sign-in resets) lock the email until an operator unlocks it: no code is sent or taken
 * meanwhile. The answer never says whether an email has access (no enumeration). Without SMTP the code
 * goes to the sandbox outbox, and only for an email whose every app is a sandbox app; production apps
 * need SMTP.
 */
export const SIGN_IN = { codeTtlSeconds: 600, codesPerWindow: 5, windowSeconds: 900, guessesPerCode: 5, failuresBeforeLock: 20 } as const;

export interface SignInDeps {
  prisma: PrismaClient;
  serviceSecret: ServiceSecret;
  mailer: Mailer | null;
}

export type CodeRequestOutcome = 'sent' | 'no_access' | 'throttled' | 'no_mail' | 'locked';

const codeHash = (deps: SignInDeps, codeId: string, code: string) =>
  hmacHex(currentKey(deps.serviceSecret), `dashboard-sign-in-code:${codeId}:${code}`);

function mailText(code: string): { subject: string; text: string } {
  return {
    subject: 'Your partner dashboard sign-in code',
    text: `Your partner dashboard sign-in code is ${code}. It works once, for ${SIGN_IN.codeTtlSeconds / 60} minutes.\nIf you did not ask to sign in, ignore this mail.`,
  };
}

export async function requestSignInCode(deps: SignInDeps, email: string, now = new Date()): Promise<CodeRequestOutcome> {
  const memberships = await membershipsOf(deps.prisma, email);
  if (memberships.length === 0) return 'no_access';
  if (await isLocked(deps.prisma, email)) return 'locked';
  const recent = await deps.prisma.partnerSignInCode.count({
    where: { email, createdAt: { gt: new Date(now.getTime() - SIGN_IN.windowSeconds * 1000) } },
  });
  if (recent >= SIGN_IN.codesPerWindow) return 'throttled';
  const apps = await deps.prisma.app.findMany({
    where: { id: { in: memberships.map((m) => m.appId) } },
    select: { id: true, environment: true },
  });
  const outbox = deps.mailer === null ? apps.find((a) => a.environment === 'sandbox') : undefined;
  if (deps.mailer === null && (outbox === undefined || apps.some((a) => a.environment !== 'sandbox'))) return 'no_mail';
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const id = newId('partnerSignInCode');
  const message = mailText(code);
  await deps.prisma.$transaction(async (tx) => {
    // A new code replaces the ones before it.
    await tx.partnerSignInCode.updateMany({ where: { email, usedAt: null }, data: { usedAt: now } });
    await tx.partnerSignInCode.create({
      data: {
        id,
        email,
        codeHash: codeHash(deps, id, code),
        expiresAt: new Date(now.getTime() + SIGN_IN.codeTtlSeconds * 1000),
        createdAt: now,
      },
    });
    if (outbox)
      await tx.sandboxMail.create({
        data: { id: newId('sandboxMail'), appId: outbox.id, toAddress: email, subject: message.subject, body: message.text },
      });
  });
  if (deps.mailer) await deps.mailer.send({ to: email, ...message });
  return 'sent';
}

/** The memberships a right code opens; null for a wrong, spent, expired or over-guessed code. */
export async function redeemSignInCode(deps: SignInDeps, email: string, code: string, now = new Date()) {
  const row = await deps.prisma.partnerSignInCode.findFirst({
    where: { email, usedAt: null, expiresAt: { gt: now } },
    orderBy: { createdAt: 'desc' },
  });
  if (!row || (await isLocked(deps.prisma, email))) return null;
  // Count the guess first, atomically, so parallel guesses can't exceed the allowance.
  const counted = await deps.prisma.partnerSignInCode.updateMany({
    where: { id: row.id, usedAt: null, attempts: { lt: SIGN_IN.guessesPerCode } },
    data: { attempts: { increment: 1 } },
  });
  if (counted.count === 0) return null;
  if (!/^\d{6}$/.test(code) || !safeEqual(row.codeHash, codeHash(deps, row.id, code))) {
    await countFailure(deps.prisma, email, now);
    return null;
  }
  const spent = await deps.prisma.partnerSignInCode.updateMany({ where: { id: row.id, usedAt: null }, data: { usedAt: now } });
  if (spent.count === 0) return null;
  await deps.prisma.partnerSignInLock.updateMany({ where: { email, lockedAt: null }, data: { failures: 0, updatedAt: now } });
  const memberships = await membershipsOf(deps.prisma, email);
  return memberships.length > 0 ? memberships : null;
}

const isLocked = async (prisma: PrismaClient, email: string) => (await signInLockOf(prisma, email)).lockedAt !== null;

/** One more wrong code for the email, in one statement (parallel guesses each count); locks it at the limit. */
async function countFailure(prisma: PrismaClient, email: string, now: Date): Promise<void> {
  await prisma.$executeRaw`
    INSERT INTO partner_sign_in_locks (email, failures, locked_at, updated_at)
    VALUES (${email}, 1, NULL, ${now})
    ON CONFLICT (email) DO UPDATE SET
      failures = partner_sign_in_locks.failures + 1,
      locked_at = COALESCE(partner_sign_in_locks.locked_at,
        CASE WHEN partner_sign_in_locks.failures + 1 >= ${SIGN_IN.failuresBeforeLock} THEN ${now}::timestamptz END),
      updated_at = ${now}`;
}

/** Whether the email is locked now, and its running total of wrong codes (the CLI's and the console's view). */
export async function signInLockOf(
  prisma: PrismaClient,
  email: string,
): Promise<{ email: string; failures: number; lockedAt: string | null }> {
  const lock = await prisma.partnerSignInLock.findUnique({ where: { email } });
  return { email, failures: lock?.failures ?? 0, lockedAt: lock?.lockedAt?.toISOString() ?? null };
}

/** An operator's unlock: the email may ask for codes again, its total back at 0. */
export async function unlockSignIn(prisma: PrismaClient, email: string, now = new Date()) {
  await prisma.partnerSignInLock.updateMany({ where: { email }, data: { failures: 0, lockedAt: null, updatedAt: now } });
  return signInLockOf(prisma, email);
}

/** The newest sign-in code a sandbox outbox holds for an email (the sandbox CLI's and tests' way in). */
export async function sandboxSignInCode(prisma: PrismaClient, email: string): Promise<string | null> {
  const mail = await prisma.sandboxMail.findFirst({
    where: { toAddress: email, subject: mailText('').subject },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
  });
  return mail ? (/\bis (\d{6})\b/.exec(mail.body)?.[1] ?? null) : null;
}
