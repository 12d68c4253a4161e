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
 * meanwhile. The answer never says whether an email has access (no enumeration), nor does its time:
 * see requestSignInCode. Without SMTP the code goes to the sandbox outbox, and only for an email whose
 * every app is a sandbox app; production apps need SMTP.
 */
export const SIGN_IN = { codeTtlSeconds: 600, codesPerWindow: 5, windowSeconds: 900, guessesPerCode: 5, failuresBeforeLock: 20 } as const;

export interface SignInDeps {
  prisma: PrismaClient;
  serviceSecret: ServiceSecret;
  mailer: Mailer | null;
}

export type CodeRequestOutcome = 'sent' | 'no_access' | 'throttled' | 'no_mail' | 'locked';

export interface CodeRequest {
  outcome: CodeRequestOutcome;
  /**
   * The mail's send over SMTP, left running so the answer waits for no mail server: its time would
   * tell a member from a stranger. Settles with the send's error, or null (also when nothing is sent);
   * never rejects.
   */
  mailing: Promise<Error | null>;
}

const codeHash = (deps: SignInDeps, codeId: string, code: string) =>
  hmacHex(currentKey(deps.serviceSecret), `dashboard-sign-in-code:${codeId}:${code}`);

function mailText(code: string): { subject: string; text: string } {
  return {
    subject: 'Your partner dashboard sign-in code',
    text: `Your partner dashboard sign-in code is ${code}. It works once, for ${SIGN_IN.codeTtlSeconds / 60} minutes.\nIf you did not ask to sign in, ignore this mail.`,
  };
}

/** How a new code reaches the email: SMTP, the sandbox outbox of one of its apps, or not at all (and why). */
type Delivery = { outcome: 'sent'; by: 'smtp' } | { outcome: 'sent'; by: 'outbox'; appId: string } | { outcome: 'no_access' | 'no_mail' };

function deliveryOf(deps: SignInDeps, apps: ReadonlyArray<{ appId: string; environment: string }>): Delivery {
  if (apps.length === 0) return { outcome: 'no_access' };
  if (deps.mailer !== null) return { outcome: 'sent', by: 'smtp' };
  // Without SMTP only an email whose every app is a sandbox app gets its code, in the outbox.
  const outbox = apps.find((a) => a.environment === 'sandbox');
  if (outbox === undefined || apps.some((a) => a.environment !== 'sandbox')) return { outcome: 'no_mail' };
  return { outcome: 'sent', by: 'outbox', appId: outbox.appId };
}

/** The apps an email is a member of, with their environments, in one read whether or not there are any. */
const appsOf = (prisma: PrismaClient, email: string) =>
  prisma.$queryRaw<Array<{ appId: string; environment: string }>>`
    SELECT u.app_id AS "appId", a.environment
    FROM partner_users u JOIN apps a ON a.id = u.app_id
    WHERE u.email = ${email} AND u.removed_at IS NULL`;

const nothingMailed: Promise<Error | null> = Promise.resolve(null);

/**
 * A new code for the email. Member or not, the request takes one path: the same reads, the lock and
 * the throttle, and a code made, hashed and written in the same transaction. A stranger's code is
 * never mailed, so it opens nothing (redeeming finds no membership), and every code's mail goes out
 * after the answer; what differs is only whether a mail is sent, which the answer can't show.
 */
export async function requestSignInCode(deps: SignInDeps, email: string, now = new Date()): Promise<CodeRequest> {
  const apps = await appsOf(deps.prisma, email);
  if (await isLocked(deps.prisma, email)) return { outcome: 'locked', mailing: nothingMailed };
  const recent = await deps.prisma.partnerSignInCode.count({
    where: { email, createdAt: { gt: new Date(now.getTime() - SIGN_IN.windowSeconds * 1000) } },
  });
  if (recent >= SIGN_IN.codesPerWindow) return { outcome: 'throttled', mailing: nothingMailed };
  const delivery = deliveryOf(deps, apps);
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
    if ('by' in delivery && delivery.by === 'outbox')
      await tx.sandboxMail.create({
        data: { id: newId('sandboxMail'), appId: delivery.appId, toAddress: email, subject: message.subject, body: message.text },
      });
  });
  const mailing =
    'by' in delivery && delivery.by === 'smtp' && deps.mailer
      ? deps.mailer.send({ to: email, ...message }).then(
          () => null,
          (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
        )
      : nothingMailed;
  return { outcome: delivery.outcome, mailing };
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
