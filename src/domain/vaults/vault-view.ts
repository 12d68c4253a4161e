import type { PrismaClient } from '../../db/client';
import type { TVaultPolicy } from './vault.schemas';
import type { VaultToken } from './vault-config';
import { SPEND_PERIOD } from './vault-config';

type PolicyRow = Awaited<ReturnType<PrismaClient['vaultPolicy']['findFirstOrThrow']>>;

/** ada@example.com -> a***@example.com: enough to recognise, not enough to harvest. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${email[0]}***${email.slice(at)}`;
}

export function policyTokens(row: Pick<PolicyRow, 'allowedTokens'>): VaultToken[] {
  return row.allowedTokens as unknown as VaultToken[];
}

export function toVaultPolicyView(row: PolicyRow, currency: string): TVaultPolicy {
  return {
    id: row.id,
    vaultId: row.vaultId,
    version: row.version,
    status: row.status as TVaultPolicy['status'],
    spendLimit: { amountAtomic: row.spendLimitAtomic.toFixed(), currency, decimals: row.spendLimitDecimals, period: SPEND_PERIOD },
    allowedTokens: policyTokens(row),
    managedApproval: { method: 'email_otp', email: row.approvalEmail },
    activatedAt: row.activatedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
