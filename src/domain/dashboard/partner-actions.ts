import type { Prisma, PrismaClient } from '../../db/client';
import { newId } from '../values/ids';

type Tx = Prisma.TransactionClient;

/** The audit of the partner dashboard: who changed what of an app, and when (operators' invitations too). */
export interface PartnerActionView {
  id: string;
  actor: string;
  action: string;
  target: string | null;
  createdAt: string;
}

export async function recordPartnerAction(
  tx: Tx | PrismaClient,
  entry: { appId: string; actor: string; action: string; target?: string },
): Promise<void> {
  await tx.partnerAction.create({
    data: { id: newId('partnerAction'), appId: entry.appId, actor: entry.actor, action: entry.action, target: entry.target ?? null },
  });
}

export async function listPartnerActions(prisma: PrismaClient, appId: string, limit = 200): Promise<PartnerActionView[]> {
  const rows = await prisma.partnerAction.findMany({ where: { appId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: limit });
  return rows.map((r) => ({ id: r.id, actor: r.actor, action: r.action, target: r.target, createdAt: r.createdAt.toISOString() }));
}
