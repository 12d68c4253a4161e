import { randomBytes } from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';
import { z } from 'zod';
import type { PrismaClient } from '../../db/client';
import type { Operator } from '../../generated/prisma/client';
import { ApiError, notFound } from '../requests/errors';
import { parseInput } from '../requests/validation';
import { newId } from '../values/ids';
import { sha256Hex } from '../../platform/secrets';
import { openSealedText, sealText } from '../keys/sealed-text';
import type { ServiceSecret } from '../keys/service-keys';
import { OPERATOR_ROLES, type OperatorRole } from './pure/operator-roles';

/**
 * Operators are named people (docs/decisions/dashboard-and-console.md "Operators"): an email, a role,
 * a TOTP second factor sealed under the service secret, and admin API tokens of their own, each
 * named, expiring, revocable and stored only as a hash. Created and disabled with the CLI; a disabled
 * operator's sessions and tokens stop at their next request.
 */
export interface SignedInOperator {
  id: string;
  email: string;
  name: string;
  role: OperatorRole;
}

export const ZOperatorEmail = z.string().trim().toLowerCase().max(254).pipe(z.email('an email address'));
const ZCreateOperator = z.strictObject({
  email: ZOperatorEmail,
  name: z.string().trim().min(1).max(200),
  role: z.enum(OPERATOR_ROLES),
});
const ZIssueToken = z.strictObject({
  name: z.string().trim().min(1).max(100),
  days: z.coerce.number().int().min(1).max(366),
});

const TOTP_LABEL = 'operator-totp';
const TOKEN_PREFIX = 'opk_';
const ISSUER = 'Partner Payments console';

const view = (row: Operator): SignedInOperator => ({ id: row.id, email: row.email, name: row.name, role: row.role as OperatorRole });

/** Creates an operator; answers the TOTP secret and its otpauth URI once, to enrol an authenticator app. */
export async function createOperator(prisma: PrismaClient, serviceSecret: ServiceSecret, input: unknown) {
  const v = parseInput(ZCreateOperator, input, 'body');
  if (await prisma.operator.findUnique({ where: { email: v.email } }))
    throw new ApiError('conflict', `An operator with email ${v.email} exists`);
  const id = newId('operator');
  const totpSecret = generateSecret();
  const row = await prisma.operator.create({
    data: { id, email: v.email, name: v.name, role: v.role, totpSealed: sealText(serviceSecret, TOTP_LABEL, id, totpSecret) },
  });
  return { operator: view(row), totpSecret, otpauthUri: generateURI({ issuer: ISSUER, label: v.email, secret: totpSecret }) };
}

export async function disableOperator(prisma: PrismaClient, email: string) {
  const row = await operatorByEmail(prisma, email);
  const disabled = await prisma.operator.update({ where: { id: row.id }, data: { disabledAt: row.disabledAt ?? new Date() } });
  return { operator: view(disabled), disabledAt: disabled.disabledAt!.toISOString() };
}

export async function listOperators(prisma: PrismaClient) {
  const rows = await prisma.operator.findMany({ orderBy: { createdAt: 'asc' } });
  return rows.map((r) => ({ ...view(r), disabledAt: r.disabledAt?.toISOString() ?? null }));
}

async function operatorByEmail(prisma: PrismaClient, email: string): Promise<Operator> {
  const row = await prisma.operator.findUnique({ where: { email: parseInput(ZOperatorEmail, email, 'query') } });
  if (!row) throw notFound('Operator');
  return row;
}

/** The active operator with this email, or null (unknown or disabled). */
export async function activeOperator(prisma: PrismaClient, email: string): Promise<SignedInOperator | null> {
  const parsed = ZOperatorEmail.safeParse(email);
  if (!parsed.success) return null;
  const row = await prisma.operator.findUnique({ where: { email: parsed.data } });
  return row && !row.disabledAt ? view(row) : null;
}

/** Who the company's OpenID Connect provider vouches for: its issuer and subject, and the email it says. */
export interface OidcIdentity {
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
}

/**
 * The active operator an identity from the company's provider signs in as, or null. A subject bound
 * before is that operator for good; an unbound one binds, once, to the unbound active operator with
 * its verified email. So a provider account that later takes over an address never becomes an
 * operator someone else already signs in as.
 */
export async function operatorOfIdentity(prisma: PrismaClient, identity: OidcIdentity): Promise<SignedInOperator | null> {
  const bound = await prisma.operator.findUnique({
    where: { oidcIssuer_oidcSubject: { oidcIssuer: identity.issuer, oidcSubject: identity.subject } },
  });
  if (bound) return bound.disabledAt ? null : view(bound);
  const email = ZOperatorEmail.safeParse(identity.email ?? '');
  if (!identity.emailVerified || !email.success) return null;
  const claimed = await prisma.operator.updateMany({
    where: { email: email.data, disabledAt: null, oidcSubject: null },
    data: { oidcIssuer: identity.issuer, oidcSubject: identity.subject },
  });
  return claimed.count === 1 ? activeOperator(prisma, email.data) : null;
}

export async function activeOperatorById(prisma: PrismaClient, id: string): Promise<SignedInOperator | null> {
  const row = await prisma.operator.findUnique({ where: { id } });
  return row && !row.disabledAt ? view(row) : null;
}

/**
 * Whether `code` is the operator's current TOTP code (a step either side allowed for clock drift),
 * never one already taken: the step accepted is stored, and a code of that step or an earlier one is
 * refused, under a row lock so two racing sign-ins can't both take it.
 */
export async function takeTotpCode(prisma: PrismaClient, serviceSecret: ServiceSecret, operatorId: string, code: string, now = new Date()) {
  if (!/^\d{6}$/.test(code)) return false;
  return prisma.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<Array<{ totp_sealed: string; totp_last_step: bigint | null }>>`
      SELECT totp_sealed, totp_last_step FROM operators WHERE id = ${operatorId} AND disabled_at IS NULL FOR UPDATE`;
    if (!row) return false;
    const secret = openSealedText(serviceSecret, TOTP_LABEL, operatorId, row.totp_sealed);
    if (secret instanceof Error) return false;
    const result = await verify({
      secret,
      token: code,
      epoch: Math.floor(now.getTime() / 1000),
      epochTolerance: 30,
      ...(row.totp_last_step !== null ? { afterTimeStep: Number(row.totp_last_step) } : {}),
    });
    if (!result.valid || !('timeStep' in result)) return false;
    await tx.operator.update({ where: { id: operatorId }, data: { totpLastStep: BigInt(result.timeStep) } });
    return true;
  });
}

/** Issues a named token for the operator, shown once; only its hash is kept. */
export async function issueOperatorToken(prisma: PrismaClient, email: string, input: unknown, now = new Date()) {
  const v = parseInput(ZIssueToken, input, 'body');
  const operator = await operatorByEmail(prisma, email);
  if (operator.disabledAt) throw new ApiError('conflict', 'That operator is disabled');
  const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  const row = await prisma.operatorToken.create({
    data: {
      id: newId('operatorToken'),
      operatorId: operator.id,
      name: v.name,
      tokenHash: sha256Hex(token),
      expiresAt: new Date(now.getTime() + v.days * 86_400_000),
    },
  });
  return { tokenId: row.id, name: row.name, operator: operator.email, expiresAt: row.expiresAt.toISOString(), token };
}

export async function revokeOperatorToken(prisma: PrismaClient, tokenId: string) {
  const row = await prisma.operatorToken.findUnique({ where: { id: tokenId } });
  if (!row) throw notFound('Operator token');
  const revoked = await prisma.operatorToken.update({ where: { id: row.id }, data: { revokedAt: row.revokedAt ?? new Date() } });
  return { tokenId: revoked.id, revokedAt: revoked.revokedAt!.toISOString() };
}

export async function listOperatorTokens(prisma: PrismaClient, email: string) {
  const operator = await operatorByEmail(prisma, email);
  const rows = await prisma.operatorToken.findMany({ where: { operatorId: operator.id }, orderBy: { createdAt: 'asc' } });
  return rows.map((r) => ({
    tokenId: r.id,
    name: r.name,
    expiresAt: r.expiresAt.toISOString(),
    revokedAt: r.revokedAt?.toISOString() ?? null,
    lastUsedAt: r.lastUsedAt?.toISOString() ?? null,
  }));
}

/**
 * The operator a presented token belongs to, or null: unknown, expired, revoked, or its operator
 * disabled. Looked up by the token's SHA-256 (a 256-bit random token needs no slow hash), so the
 * comparison is the index's, not a string compare an attacker could time.
 */
export async function operatorOfToken(prisma: PrismaClient, presented: string, now = new Date()): Promise<SignedInOperator | null> {
  if (!presented.startsWith(TOKEN_PREFIX) || presented.length > 100) return null;
  const row = await prisma.operatorToken.findUnique({ where: { tokenHash: sha256Hex(presented) }, include: { operator: true } });
  if (!row || row.revokedAt || row.expiresAt <= now || row.operator.disabledAt) return null;
  // Last use, to the minute: enough to spot a forgotten token without a write per request.
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > 60_000)
    await prisma.operatorToken.update({ where: { id: row.id }, data: { lastUsedAt: now } });
  return view(row.operator);
}
