import type { Prisma, PrismaClient } from '../../db/client';
import type { SettlementSource } from '../settlement/settlement-legs';

type Db = PrismaClient | Prisma.TransactionClient;

/**
 * The one service address money may be returned to: a vault, for its own money. A vault's funding
 * that reached a Payment no longer open for it (a late payment) goes back where it came from: `to` is
 * the vault whose funding leg of this Payment is the incident's transfer (the same transaction, signed
 * by the service from that vault's address). Anything else keeps the service-controlled destination rule.
 */
export async function returnsVaultFunding(db: Db, input: { paymentId: string; transferId: string | null; to: string }): Promise<boolean> {
  if (!input.transferId) return false;
  const transfer = await db.paymentTransfer.findUnique({ where: { id: input.transferId } });
  const to = input.to.toLowerCase();
  if (!transfer || transfer.paymentId !== input.paymentId || transfer.fromAddress.toLowerCase() !== to) return false;
  // The leg the service signed for the vault (whatever its operation's status now): its txHash is unique.
  const leg = await db.settlementLeg.findUnique({ where: { txHash: transfer.txHash.toLowerCase() } });
  if (leg?.sourceType !== 'vault_funding' || leg.fromAddress.toLowerCase() !== to) return false;
  const funding = await db.vaultFundingOperation.findUnique({ where: { id: leg.sourceId }, select: { paymentId: true } });
  return funding?.paymentId === input.paymentId;
}

/** The sender's check of the same exception: an incident recovery that returns a vault's own funding. */
export async function isVaultFundingReturn(db: Db, source: SettlementSource, to: string): Promise<boolean> {
  if (source.type !== 'incident_recovery') return false;
  const recovery = await db.fundReturn.findUnique({ where: { id: source.id }, select: { paymentId: true, incidentId: true } });
  const incident = recovery?.incidentId
    ? await db.paymentIncident.findUnique({ where: { id: recovery.incidentId }, select: { transferId: true } })
    : null;
  return incident ? returnsVaultFunding(db, { paymentId: recovery!.paymentId, transferId: incident.transferId, to }) : false;
}
