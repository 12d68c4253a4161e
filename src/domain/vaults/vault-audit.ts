import type { Prisma, PrismaClient } from '../../db/client';
import type { AuthenticatedApp } from '../apps/apps';
import { writeEvents, type NewEvent } from '../event-log/events';
import { newId } from '../values/ids';
import { notFound } from '../requests/errors';
import { afterPosition, pageOf, type CursorCodec } from '../requests/pagination';
import type { TListVaultAuditEventsQuery, TVaultActor, TVaultAuditEvent } from './vault.schemas';

/**
 * Who made a change: the partner's app credentials (partner_app, the app id), the service itself
 * (service, no id), or a payer through the client API or the hosted checkout (client, the payer's
 * account id): a client token is not the partner's app credential.
 */
export type VaultActor = TVaultActor;

export const VAULT_AUDIT_EVENT_TYPES = [
  'vault.created',
  'vault.policy.created',
  'vault.policy.updated',
  'vault.policy.approval_sent',
  'vault.policy.approval_failed',
  'vault.policy.approval_verified',
  'vault.policy.approval_clock_advanced',
  'vault.policy_active',
  'vault.funding.authorized',
  'vault.funding.broadcast',
  'vault.funding_posted',
  'vault.funding_requires_intervention',
] as const;
export type VaultAuditEventType = (typeof VAULT_AUDIT_EVENT_TYPES)[number];

export interface VaultRef {
  id: string;
  appId: string;
  accountId: string;
}

/**
 * Writes one audit row, and the partner webhook events that go with it, inside the caller's
 * transaction: the audit trail holds a change if and only if the change committed.
 */
export async function writeVaultAudit(
  tx: Prisma.TransactionClient,
  vault: VaultRef,
  entry: { policyId: string | null; eventType: VaultAuditEventType; actor: VaultActor; payload: Record<string, unknown> },
  webhook?: { apiVersion: string; events: NewEvent[] },
): Promise<string> {
  const id = newId('vaultAuditEvent');
  await tx.vaultAuditEvent.create({
    data: {
      id,
      vaultId: vault.id,
      policyId: entry.policyId,
      eventType: entry.eventType,
      actorType: entry.actor.type,
      actorId: entry.actor.id,
      payload: entry.payload as Prisma.InputJsonValue,
    },
  });
  if (webhook && webhook.events.length > 0) {
    // The audit row's id is the step: each audited change emits its events once.
    await writeEvents(
      tx,
      { appId: vault.appId, apiVersion: webhook.apiVersion, accountId: vault.accountId, resourceType: 'vault', resourceId: vault.id },
      id,
      webhook.events,
    );
  }
  return id;
}

type AuditRow = Awaited<ReturnType<PrismaClient['vaultAuditEvent']['findFirstOrThrow']>>;

export function toVaultAuditEventView(r: AuditRow): TVaultAuditEvent {
  return {
    id: r.id,
    vaultId: r.vaultId,
    policyId: r.policyId,
    eventType: r.eventType,
    actor: { type: r.actorType as TVaultActor['type'], id: r.actorId },
    payload: (r.payload ?? {}) as Record<string, unknown>,
    createdAt: r.createdAt.toISOString(),
  };
}

/** GET /v2/accounts/{accountId}/vault/audit-events: newest first, keyset pages. */
export async function listVaultAuditEvents(
  prisma: PrismaClient,
  app: AuthenticatedApp,
  accountId: string,
  query: TListVaultAuditEventsQuery,
  cursors: CursorCodec,
): Promise<{ data: TVaultAuditEvent[]; nextCursor?: string }> {
  const account = await prisma.account.findFirst({ where: { id: accountId, appId: app.id }, select: { id: true } });
  if (!account) throw notFound('Account');
  const vault = await prisma.vault.findFirst({ where: { accountId, appId: app.id }, select: { id: true } });
  if (!vault) throw notFound('Vault');
  const scope = `vault-audit:${app.id}:${vault.id}`;
  const position = query.cursor ? cursors.decode(scope, query.cursor) : undefined;
  const rows = await prisma.vaultAuditEvent.findMany({
    where: { AND: [{ vaultId: vault.id }, afterPosition(position)] },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: query.limit + 1,
  });
  const page = pageOf(rows, query.limit, cursors, scope);
  return { data: page.items.map(toVaultAuditEventView), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
}
