import type { PrismaClient } from '../../db/client';
import { payerShares } from '../payments/payer-shares';
import { payersOf, type FundReturnRow } from './fund-returns';
import { checkReturnDestination, type ApprovalFacts, type DestinationRefusal } from './pure/return-destination-check';

/** The signer refused a fund return's destination: nothing was signed; the return is held for an operator. */
export class ReturnDestinationRefusedError extends Error {
  constructor(
    readonly reason: DestinationRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'ReturnDestinationRefusedError';
  }
}

/** The critical alert a refused destination raises (subject `fund_return:<id>`, so the console links the return). */
export const RETURN_DESTINATION_REFUSED = 'return_destination_refused';

/**
 * Whose money the return is, read now from the books: a refund's payers are the senders of the
 * Payment's confirmed funding transfers, a recovery's the incident's payer (its transfer's sender),
 * as the create picks them (payersOf, payerShares). Only the Payment and incident ids are taken from
 * the row; a row naming another Payment's incident has no payer.
 */
async function payersNow(prisma: PrismaClient, r: FundReturnRow): Promise<string[]> {
  if (r.kind === 'refund') return (await payerShares(prisma, r.paymentId)).map((x) => x.address);
  const incident = r.incidentId ? await prisma.paymentIncident.findUnique({ where: { id: r.incidentId } }) : null;
  if (incident?.paymentId !== r.paymentId) return [];
  return payersOf(prisma, incident);
}

async function approvalNow(prisma: PrismaClient, approvalId: string | null): Promise<ApprovalFacts | null> {
  if (approvalId === null) return null;
  return prisma.operatorApproval.findUnique({ where: { id: approvalId } });
}

/**
 * The signer's check, read fresh before every send (a retry too): the return goes to its payer, or
 * elsewhere under an approval two operators made for this Payment and this destination. Throws
 * ReturnDestinationRefusedError otherwise.
 */
export async function assertReturnDestination(prisma: PrismaClient, r: FundReturnRow): Promise<void> {
  const [payers, approval] = await Promise.all([payersNow(prisma, r), approvalNow(prisma, r.approvalId)]);
  const verdict = checkReturnDestination(
    {
      id: r.id,
      kind: r.kind as 'refund' | 'incident_recovery',
      paymentId: r.paymentId,
      incidentId: r.incidentId,
      toAddress: r.toAddress,
      approvalId: r.approvalId,
    },
    { payers, approval },
  );
  if (!verdict.ok)
    throw new ReturnDestinationRefusedError(
      verdict.reason,
      `${r.kind} ${r.id}: ${r.toAddress} is not the payer and no valid two-person approval allows it (${verdict.reason})`,
    );
}
