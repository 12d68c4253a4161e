import type { PrismaClient } from '../../db/client';
import { payerShares, type PayerShare } from '../payments/payer-shares';
import { payersOf, recipientVaultOf, type FundReturnRow } from './fund-returns';
import {
  checkReturnAmount,
  checkReturnDestination,
  type AmountFacts,
  type AmountRefusal,
  type ApprovalFacts,
  type DestinationRefusal,
  type ReturnToCheck,
} from './pure/return-destination-check';

export type ReturnRefusal = DestinationRefusal | AmountRefusal;

/** The signer refused a fund return (its destination or its amount): nothing was signed; the return is held for an operator. */
export class ReturnDestinationRefusedError extends Error {
  constructor(
    readonly reason: ReturnRefusal,
    message: string,
    /** An amount refusal: what the books leave to this destination now. */
    readonly allowedAtomic?: bigint,
  ) {
    super(message);
    this.name = 'ReturnDestinationRefusedError';
  }
}

/** The critical alert a refused return raises (subject `fund_return:<id>`, so the console links the return). */
export const RETURN_DESTINATION_REFUSED = 'return_destination_refused';

type Payment = Awaited<ReturnType<PrismaClient['payment']['findUniqueOrThrow']>>;
type Incident = Awaited<ReturnType<PrismaClient['paymentIncident']['findUniqueOrThrow']>>;

/** What the books say now: the Payment, its payer shares (a refund), the incident if it is the Payment's (a recovery). */
interface Books {
  payment: Payment;
  shares: PayerShare[];
  incident: Incident | null;
}

/**
 * Read fresh from the books the chain scanner wrote. Only the Payment and incident ids are taken from
 * the row; a row naming another Payment's incident has none.
 */
async function booksNow(prisma: PrismaClient, r: FundReturnRow): Promise<Books> {
  const payment = await prisma.payment.findUniqueOrThrow({ where: { id: r.paymentId } });
  if (r.kind === 'refund') return { payment, shares: await payerShares(prisma, r.paymentId), incident: null };
  const found = r.incidentId ? await prisma.paymentIncident.findUnique({ where: { id: r.incidentId } }) : null;
  return { payment, shares: [], incident: found?.paymentId === r.paymentId ? found : null };
}

/**
 * Whose money the return is: a refund's payers are the senders of the Payment's confirmed funding
 * transfers, a recovery's the incident's payer (its transfer's sender), as the create picks them
 * (payersOf, payerShares).
 */
async function payersNow(prisma: PrismaClient, r: FundReturnRow, books: Books): Promise<string[]> {
  if (r.kind === 'refund') return books.shares.map((x) => x.address);
  return books.incident ? payersOf(prisma, books.incident) : [];
}

async function approvalNow(prisma: PrismaClient, approvalId: string | null): Promise<ApprovalFacts | null> {
  if (approvalId === null) return null;
  return prisma.operatorApproval.findUnique({ where: { id: approvalId } });
}

/**
 * What the amount is weighed against: the Payment's (or its incident's) amount and asset, and every
 * return of the Payment as read now (the checked one among them, left out by the rule).
 */
async function amountFacts(prisma: PrismaClient, books: Books, approval: ApprovalFacts | null): Promise<AmountFacts> {
  const { payment, incident } = books;
  const [returns, recipientVault] = await Promise.all([
    prisma.fundReturn.findMany({
      where: { paymentId: payment.id },
      select: { id: true, kind: true, incidentId: true, toAddress: true, status: true, amountAtomic: true },
    }),
    recipientVaultOf(prisma, payment),
  ]);
  return {
    paymentIntent: payment.intent,
    paymentStatus: payment.status,
    paymentAmountAtomic: BigInt(payment.amountAtomic.toFixed()),
    shares: books.shares,
    incident: incident ? { amountAtomic: BigInt(incident.amountAtomic.toFixed()) } : null,
    // A recovery leaves in the asset its incident was held in (a foreign transfer's), as the create records it.
    asset: {
      chainId: incident?.chainId ?? payment.chainId,
      tokenAddress: incident?.tokenAddress ?? payment.tokenAddress,
    },
    returns: returns.map((x) => ({ ...x, amountAtomic: BigInt(x.amountAtomic.toFixed()) })),
    recipientVaultId: recipientVault?.id ?? null,
    approval,
  };
}

/**
 * The signer's check, read fresh before every send (a retry too): the return goes to its payer, or
 * elsewhere under an approval two operators made for this Payment and this destination; and it sends
 * no more than the books leave to that destination, in their asset. Throws
 * ReturnDestinationRefusedError otherwise.
 */
export async function assertReturnDestination(prisma: PrismaClient, r: FundReturnRow): Promise<void> {
  const books = await booksNow(prisma, r);
  const [payers, approval] = await Promise.all([payersNow(prisma, r, books), approvalNow(prisma, r.approvalId)]);
  const toCheck: ReturnToCheck = {
    id: r.id,
    kind: r.kind as 'refund' | 'incident_recovery',
    paymentId: r.paymentId,
    incidentId: r.incidentId,
    toAddress: r.toAddress,
    approvalId: r.approvalId,
  };
  const verdict = checkReturnDestination(toCheck, { payers, approval });
  if (!verdict.ok)
    throw new ReturnDestinationRefusedError(
      verdict.reason,
      `${r.kind} ${r.id}: ${r.toAddress} is not the payer and no valid two-person approval allows it (${verdict.reason})`,
    );
  const amount = BigInt(r.amountAtomic.toFixed());
  const weighed = checkReturnAmount(
    { ...toCheck, amountAtomic: amount, chainId: r.chainId, tokenAddress: r.tokenAddress, vaultId: r.vaultId },
    verdict.via,
    await amountFacts(prisma, books, verdict.via === 'approval' ? approval : null),
  );
  if (!weighed.ok)
    throw new ReturnDestinationRefusedError(
      weighed.reason,
      `${r.kind} ${r.id}: ${amount} to ${r.toAddress} in ${r.tokenAddress} on ${r.chainId}, the books leave ${weighed.allowedAtomic} (${weighed.reason})`,
      weighed.allowedAtomic,
    );
}
