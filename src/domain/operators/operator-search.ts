import type { PrismaClient } from '../../db/client';
import type { HeldKind } from './operator-holds';

/** What the console's search finds: a Payment, deposit or fund return, and which of its values matched. */
export interface SearchHit {
  kind: HeldKind;
  id: string;
  appId: string;
  status: string;
  matched: 'id' | 'externalReference' | 'transaction';
  createdAt: string;
}

const MAX_HITS = 50;
const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

/**
 * Finds what an operator pastes: an id (Payment, deposit, fund return), a Payment's externalReference
 * (any app's), or a transaction hash (a Payment's incoming transfer, a deposit's transfer or
 * settlement, any settlement leg (a vault funding's finds the Payment it paid), a fund return's
 * transaction). Newest first, at most 50.
 */
export async function searchForOperator(prisma: PrismaClient, raw: string): Promise<SearchHit[]> {
  const q = raw.trim();
  if (q.length === 0 || q.length > 255 || q.includes('\u0000')) return [];
  const hits = TX_HASH.test(q) ? await byTransaction(prisma, q.toLowerCase()) : await byIdOrReference(prisma, q);
  const unique = new Map(hits.map((h) => [`${h.kind}:${h.id}`, h]));
  return [...unique.values()].sort((a, b) => b.createdAt.localeCompare(a.createdAt)).slice(0, MAX_HITS);
}

type Row = { id: string; appId: string; status: string; createdAt: Date };
const hit =
  (kind: HeldKind, matched: SearchHit['matched']) =>
  (r: Row): SearchHit => ({ kind, id: r.id, appId: r.appId, status: r.status, matched, createdAt: r.createdAt.toISOString() });
const SELECT = { id: true, appId: true, status: true, createdAt: true } as const;

async function byIdOrReference(prisma: PrismaClient, q: string): Promise<SearchHit[]> {
  const [payments, byReference, deposits, returns] = await Promise.all([
    prisma.payment.findMany({ where: { id: q }, select: SELECT }),
    prisma.payment.findMany({
      where: { externalReference: q },
      select: SELECT,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: MAX_HITS,
    }),
    prisma.deposit.findMany({ where: { id: q }, select: SELECT }),
    prisma.fundReturn.findMany({ where: { id: q }, select: SELECT }),
  ]);
  return [
    ...payments.map(hit('payment', 'id')),
    ...byReference.map(hit('payment', 'externalReference')),
    ...deposits.map(hit('deposit', 'id')),
    ...returns.map(hit('fund_return', 'id')),
  ];
}

/** Stored hashes are lower-case (the chain modules write them so). */
async function byTransaction(prisma: PrismaClient, txHash: string): Promise<SearchHit[]> {
  const [transfers, deposits, returns, legs] = await Promise.all([
    prisma.paymentTransfer.findMany({ where: { txHash }, select: { paymentId: true }, take: MAX_HITS }),
    prisma.deposit.findMany({ where: { OR: [{ txHash }, { settlementTxHash: txHash }] }, select: SELECT, take: MAX_HITS }),
    prisma.fundReturn.findMany({ where: { transactionHash: txHash }, select: SELECT, take: MAX_HITS }),
    prisma.settlementLeg.findMany({ where: { txHash }, select: { sourceType: true, sourceId: true } }),
  ]);
  const fundings = await prisma.vaultFundingOperation.findMany({
    where: { id: { in: legs.filter((l) => l.sourceType === 'vault_funding').map((l) => l.sourceId) } },
    select: { paymentId: true },
  });
  // A vault funding's leg pays a Payment: the Payment is what the operator looks for.
  const paymentIds = [
    ...transfers.map((t) => t.paymentId),
    ...fundings.map((f) => f.paymentId),
    ...legs.filter((l) => l.sourceType === 'payment').map((l) => l.sourceId),
  ];
  const depositIds = legs.filter((l) => l.sourceType === 'deposit').map((l) => l.sourceId);
  const returnIds = legs.filter((l) => l.sourceType === 'refund' || l.sourceType === 'incident_recovery').map((l) => l.sourceId);
  const [payments, legDeposits, legReturns] = await Promise.all([
    prisma.payment.findMany({ where: { id: { in: paymentIds } }, select: SELECT }),
    prisma.deposit.findMany({ where: { id: { in: depositIds } }, select: SELECT }),
    prisma.fundReturn.findMany({ where: { id: { in: returnIds } }, select: SELECT }),
  ]);
  return [
    ...payments.map(hit('payment', 'transaction')),
    ...[...deposits, ...legDeposits].map(hit('deposit', 'transaction')),
    ...[...returns, ...legReturns].map(hit('fund_return', 'transaction')),
  ];
}
