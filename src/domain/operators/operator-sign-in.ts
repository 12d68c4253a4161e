import { randomInt } from 'node:crypto';
import type { PrismaClient } from '../../db/client';
import type { Mailer } from '../../mail/mailer';
import { hmacHex, safeEqual } from '../../platform/secrets';
import { currentKey, type ServiceSecret } from '../keys/service-keys';
import { newId } from '../values/ids';
import { activeOperator, takeTotpCode, type SignedInOperator } from './operator-accounts';

/**
 * Console sign-in without an OpenID Connect provider: an emailed one-time code (6 digits, 10 minutes,
 * one use, stored as an HMAC) and then the operator's TOTP code, both in one form. 5 wrong pairs spend
 * a code; at most 5 codes per 15 minutes per operator. The answer to asking for a code is the same
 * whether the email is an operator's or not. Without SMTP (never in production) the code is kept in
 * the row for `npm run cli -- operators dev-code`.
 */
export const OPERATOR_SIGN_IN = { codeTtlSeconds: 600, codesPerWindow: 5, windowSeconds: 900, guessesPerCode: 5 } as const;

export interface OperatorSignInDeps {
  prisma: PrismaClient;
  serviceSecret: ServiceSecret;
  mailer: Mailer | null;
  /** Keep the code for `operators dev-code` when no mail goes out: never in production. */
  keepOutbox?: boolean;
}

const codeHash = (deps: OperatorSignInDeps, codeId: string, code: string) =>
  hmacHex(currentKey(deps.serviceSecret), `operator-sign-in-code:${codeId}:${code}`);

export async function requestOperatorCode(deps: OperatorSignInDeps, email: string, now = new Date()): Promise<void> {
  const operator = await activeOperator(deps.prisma, email);
  // Drawn and hashed for anyone, so an unknown email costs what a known one does.
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const id = newId('operatorSignInCode');
  const hash = codeHash(deps, id, code);
  if (!operator) return;
  const recent = await deps.prisma.operatorSignInCode.count({
    where: { operatorId: operator.id, createdAt: { gt: new Date(now.getTime() - OPERATOR_SIGN_IN.windowSeconds * 1000) } },
  });
  if (recent >= OPERATOR_SIGN_IN.codesPerWindow) return;
  await deps.prisma.$transaction(async (tx) => {
    await tx.operatorSignInCode.updateMany({ where: { operatorId: operator.id, usedAt: null }, data: { usedAt: now } });
    await tx.operatorSignInCode.create({
      data: {
        id,
        operatorId: operator.id,
        codeHash: hash,
        outboxCode: deps.mailer || deps.keepOutbox === false ? null : code,
        expiresAt: new Date(now.getTime() + OPERATOR_SIGN_IN.codeTtlSeconds * 1000),
        createdAt: now,
      },
    });
  });
  // Sent after the answer is decided: a slow or failing mail server shows in the log, not in the page.
  deps.mailer
    ?.send({
      to: operator.email,
      subject: 'Your operator console sign-in code',
      text: `Your operator console sign-in code is ${code}. It works once, for ${OPERATOR_SIGN_IN.codeTtlSeconds / 60} minutes, with your authenticator's code.`,
    })
    .catch(() => undefined);
}

/** The operator a right emailed code and a right TOTP code sign in, or null. */
export async function signInOperator(
  deps: OperatorSignInDeps,
  email: string,
  code: string,
  totp: string,
  now = new Date(),
): Promise<SignedInOperator | null> {
  const operator = await activeOperator(deps.prisma, email);
  if (!operator) return null;
  const row = await deps.prisma.operatorSignInCode.findFirst({
    where: { operatorId: operator.id, usedAt: null, expiresAt: { gt: now } },
    orderBy: { createdAt: 'desc' },
  });
  if (!row) return null;
  // Counted first, atomically, so parallel guesses can't exceed the allowance.
  const counted = await deps.prisma.operatorSignInCode.updateMany({
    where: { id: row.id, usedAt: null, attempts: { lt: OPERATOR_SIGN_IN.guessesPerCode } },
    data: { attempts: { increment: 1 } },
  });
  if (counted.count === 0) return null;
  if (!/^\d{6}$/.test(code) || !safeEqual(row.codeHash, codeHash(deps, row.id, code))) return null;
  if (!(await takeTotpCode(deps.prisma, deps.serviceSecret, operator.id, totp, now))) return null;
  const spent = await deps.prisma.operatorSignInCode.updateMany({ where: { id: row.id, usedAt: null }, data: { usedAt: now } });
  return spent.count === 1 ? operator : null;
}

/** The newest unspent code kept for an operator where no mail is configured (development only). */
export async function outboxOperatorCode(prisma: PrismaClient, email: string): Promise<string | null> {
  const operator = await activeOperator(prisma, email);
  if (!operator) return null;
  const row = await prisma.operatorSignInCode.findFirst({
    where: { operatorId: operator.id, usedAt: null, outboxCode: { not: null } },
    orderBy: { createdAt: 'desc' },
  });
  return row?.outboxCode ?? null;
}
