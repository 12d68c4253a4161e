import { randomInt } from 'node:crypto';
import type { PrismaClient } from '../../db/client';
import type { Mailer } from '../../mail/mailer';
import type { AuthenticatedApp } from '../apps/apps';
import { ApiError, UpstreamFailure } from '../requests/errors';
import { newId } from '../values/ids';
import { hmacHex, safeEqual } from '../../platform/secrets';
import { writeVaultAudit } from './vault-audit';
import { clockNow } from '../sandbox/sandbox-clock';
import { appActor, lockVault, requireVault } from './vaults';
import { maskEmail } from './vault-view';
import { anyKey, currentKey, type ServiceSecret } from '../keys/service-keys';

export const APPROVAL_CODE_TTL_MS = 10 * 60 * 1000;
export const APPROVAL_MAX_ATTEMPTS = 5;
/** Codes one pending policy may be sent: with 5 attempts each, a guess stays a 25-in-a-million chance. */
export const APPROVAL_MAX_SENDS = 5;

export interface ApprovalDeps {
  prisma: PrismaClient;
  serviceSecret: ServiceSecret;
  /** SMTP when configured; null means the sandbox outbox (sandbox apps) or no mail at all (424). */
  mailer: Mailer | null;
}

/** Keyed by the service secret and the code's own id: a leaked table can't be brute-forced offline. */
function codeHash(secret: string, codeId: string, code: string): string {
  return hmacHex(secret, `vault-approval:${codeId}:${code}`);
}

function approvalMail(code: string, accountId: string) {
  return {
    subject: 'Your vault approval code',
    text: `Your code to approve the vault spending policy of account ${accountId} is ${code}. It expires in 10 minutes and works once.`,
  };
}

/**
 * Emails a fresh 6-digit code for the vault's pending policy. Only an HMAC of it is stored; codes sent
 * before for that policy stop working. With SMTP the mail goes out before the code is recorded (a
 * failed send records nothing but an approval_failed audit row); in the sandbox without SMTP the mail
 * is written to the outbox in the same transaction as the code.
 */
export async function sendVaultApproval(deps: ApprovalDeps, app: AuthenticatedApp, accountId: string) {
  const useOutbox = !deps.mailer && app.environment === 'sandbox';
  if (!deps.mailer && !useOutbox) throw new ApiError('chain_config_missing', 'Email approval is not configured for this environment');
  const vault = await requireVault(deps.prisma, app.id, accountId);
  const pending = await deps.prisma.vaultPolicy.findFirst({ where: { vaultId: vault.id, status: 'pending_approval' } });
  if (!pending)
    throw new ApiError('conflict', 'No vault policy is waiting for approval: PUT the policy first', { reasonCode: 'no_pending_policy' });
  const sends = await deps.prisma.vaultApprovalCode.count({ where: { policyId: pending.id } });
  if (sends >= APPROVAL_MAX_SENDS) {
    throw new ApiError('conflict', `At most ${APPROVAL_MAX_SENDS} codes per policy: PUT the policy again to start over`, {
      reasonCode: 'approval_send_limit',
    });
  }

  const code = randomInt(0, 1_000_000).toString().padStart(6, '0');
  const codeId = newId('vaultApprovalCode');
  const mail = { to: pending.approvalEmail, ...approvalMail(code, accountId) };
  if (deps.mailer) {
    try {
      await deps.mailer.send(mail);
    } catch {
      // The cause (it may name the SMTP host) stays out of the response; the audit row records the failure.
      await deps.prisma.$transaction(async (tx) => {
        await lockVault(tx, vault.id);
        await writeVaultAudit(tx, vault, {
          policyId: pending.id,
          eventType: 'vault.policy.approval_failed',
          actor: appActor(app),
          payload: { reason: 'mail_not_sent', sentTo: maskEmail(pending.approvalEmail) },
        });
      });
      throw new UpstreamFailure('unavailable', 'The approval email could not be sent; try again later', undefined, 30);
    }
  }
  const now = new Date();
  const expiresAt = new Date(now.getTime() + APPROVAL_CODE_TTL_MS);
  await deps.prisma.$transaction(async (tx) => {
    await lockVault(tx, vault.id);
    const still = await tx.vaultPolicy.findFirst({ where: { id: pending.id, status: 'pending_approval' } });
    if (!still)
      throw new ApiError('conflict', 'The policy changed while the code was being sent: request a new code', {
        reasonCode: 'no_pending_policy',
      });
    // Earlier codes of this policy stop working: only the newest email counts.
    await tx.vaultApprovalCode.updateMany({
      where: { policyId: pending.id, consumedAt: null, expiresAt: { gt: now } },
      data: { expiresAt: now },
    });
    await tx.vaultApprovalCode.create({
      data: { id: codeId, policyId: pending.id, codeHash: codeHash(currentKey(deps.serviceSecret), codeId, code), expiresAt },
    });
    if (useOutbox) {
      await tx.sandboxMail.create({
        data: { id: newId('sandboxMail'), appId: app.id, accountId, toAddress: mail.to, subject: mail.subject, body: mail.text },
      });
    }
    await writeVaultAudit(tx, vault, {
      policyId: pending.id,
      eventType: 'vault.policy.approval_sent',
      actor: appActor(app),
      payload: {
        method: 'email_otp',
        sentTo: maskEmail(pending.approvalEmail),
        expiresAt: expiresAt.toISOString(),
        delivery: useOutbox ? 'sandbox_outbox' : 'smtp',
      },
    });
  });
  return {
    approval: {
      policyId: pending.id,
      method: 'email_otp' as const,
      sentTo: maskEmail(pending.approvalEmail),
      expiresAt: expiresAt.toISOString(),
      attemptsAllowed: APPROVAL_MAX_ATTEMPTS,
    },
  };
}

type VerifyOutcome = { ok: true; policyId: string } | { ok: false; error: ApiError };

/**
 * Checks the code against the newest code of the pending policy (constant-time, on its HMAC). Right:
 * the code is used up, the policy becomes active (the one before is superseded), and vault.policy_active
 * is emitted, all in one transaction. Wrong: the attempt is counted and audited (committed), then 422;
 * expired, used or out of attempts: 409.
 */
export async function verifyVaultApproval(deps: Omit<ApprovalDeps, 'mailer'>, app: AuthenticatedApp, accountId: string, code: string) {
  const vault = await requireVault(deps.prisma, app.id, accountId);
  const outcome = await deps.prisma.$transaction(async (tx): Promise<VerifyOutcome> => {
    const locked = await lockVault(tx, vault.id);
    const pending = await tx.vaultPolicy.findFirst({ where: { vaultId: vault.id, status: 'pending_approval' } });
    if (!pending)
      return { ok: false, error: new ApiError('conflict', 'No vault policy is waiting for approval', { reasonCode: 'no_pending_policy' }) };
    const now = new Date();
    const row = await tx.vaultApprovalCode.findFirst({ where: { policyId: pending.id }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
    const expired = new ApiError('approval_code_expired', 'The code expired, was used, or ran out of attempts: request a new one');
    // A sandbox app may have moved the approval's clock (sandbox-clock.ts): its codes expire on it.
    const clock = await clockNow(tx, app, 'vault_policy_approval', pending.id, now);
    if (!row || row.consumedAt || row.expiresAt <= clock || row.attempts >= APPROVAL_MAX_ATTEMPTS) return { ok: false, error: expired };
    if (!anyKey(deps.serviceSecret, (key) => safeEqual(codeHash(key, row.id, code), row.codeHash))) {
      const attempts = row.attempts + 1;
      await tx.vaultApprovalCode.update({ where: { id: row.id }, data: { attempts } });
      await writeVaultAudit(tx, vault, {
        policyId: pending.id,
        eventType: 'vault.policy.approval_failed',
        actor: appActor(app),
        payload: { reason: 'code_mismatch', attemptsRemaining: APPROVAL_MAX_ATTEMPTS - attempts },
      });
      return {
        ok: false,
        error: new ApiError('approval_code_invalid', 'The code is not correct', { attemptsRemaining: APPROVAL_MAX_ATTEMPTS - attempts }),
      };
    }
    await tx.vaultApprovalCode.update({ where: { id: row.id }, data: { consumedAt: now } });
    await tx.vaultPolicy.updateMany({ where: { vaultId: vault.id, status: 'active' }, data: { status: 'superseded' } });
    await tx.vaultPolicy.update({ where: { id: pending.id }, data: { status: 'active', activatedAt: now } });
    // The spend periods start at the first activation and keep their rhythm across policy changes.
    await tx.vault.update({ where: { id: vault.id }, data: { activePolicyId: pending.id, periodAnchorAt: locked.periodAnchorAt ?? now } });
    await writeVaultAudit(tx, vault, {
      policyId: pending.id,
      eventType: 'vault.policy.approval_verified',
      actor: appActor(app),
      payload: { method: 'email_otp' },
    });
    await writeVaultAudit(
      tx,
      vault,
      {
        policyId: pending.id,
        eventType: 'vault.policy_active',
        actor: appActor(app),
        payload: {
          version: pending.version,
          previousPolicyId: locked.activePolicyId,
          spendLimitAtomic: pending.spendLimitAtomic.toFixed(),
        },
      },
      {
        apiVersion: app.apiVersion,
        events: [{ name: 'vault.policy_active', payload: { accountId, vaultId: vault.id, policyId: pending.id } }],
      },
    );
    return { ok: true, policyId: pending.id };
  });
  if (!outcome.ok) throw outcome.error;
  return outcome;
}
