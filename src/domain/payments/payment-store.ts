import { createHash } from 'node:crypto';
import type { Prisma, PrismaClient } from '../../db/client';
import { parseTransferKey } from '../../chain/transfer-key';
import type { Payment } from '../../generated/prisma/client';
import { postToLedger, updateTransactionStatus } from '../ledger/ledger';
import { writeEvents, type EventSubject } from '../events';
import type { ResolutionRequest } from '../operator-resolution';
import { unusableTransferKind, type PaymentEventName, type PaymentStatus } from './payment-machine';
import { collectionPosting, incidentPosting, settlementPosting } from './payment-postings';
import type { PersistedTransition } from './payment-serde';

/**
 * Where a Payment's steps are written: the row (conditional on the statusVersion the workflow saw),
 * its events, incidents, transfer statuses and ledger postings, each step in one transaction. Every id
 * derives from (Payment, step), so a retried step writes nothing twice.
 */

const digest = (...parts: string[]) => createHash('sha256').update(parts.join('|')).digest('hex').slice(0, 24);

function subjectOf(p: Payment): EventSubject {
  return { appId: p.appId, apiVersion: p.apiVersion, accountId: p.recipientAccountId, resourceType: 'payment', resourceId: p.id };
}

/** Every Payment event carries the state after the change. */
function paymentEvents(p: Payment, names: PaymentEventName[]) {
  const payload = {
    paymentId: p.id,
    accountId: p.recipientAccountId,
    status: p.status,
    statusVersion: p.statusVersion,
    operationalState: p.operationalState,
    operationalReasonCode: p.operationalReasonCode,
  };
  return names.map((name) => ({ name, payload }));
}

export async function persistPaymentTransition(prisma: PrismaClient, paymentId: string, t: PersistedTransition): Promise<void> {
  await prisma.$transaction((tx) => applyPaymentTransition(tx, paymentId, t));
}

export async function applyPaymentTransition(tx: Prisma.TransactionClient, paymentId: string, t: PersistedTransition): Promise<void> {
  const current = await tx.payment.findUniqueOrThrow({ where: { id: paymentId } });
  if (current.statusVersion > t.fromStatusVersion) return; // already applied by an earlier attempt
  const { count } = await tx.payment.updateMany({
    where: { id: paymentId, statusVersion: t.fromStatusVersion },
    data: {
      status: t.status,
      stage: t.stage,
      statusVersion: t.statusVersion,
      operationalState: t.operationalState,
      operationalReasonCode: t.operationalReasonCode,
      ...(current.operationalState !== t.operationalState || current.operationalReasonCode !== t.operationalReasonCode
        ? { operationalUpdatedAt: new Date() }
        : {}),
      receivedAtomic: t.confirmedAtomic,
      settlementTxHash: t.settlementTxHash,
      ...(t.stamps.acceptedAt ? { acceptedAt: new Date(t.stamps.acceptedAt) } : {}),
      ...(t.stamps.succeededAt ? { succeededAt: new Date(t.stamps.succeededAt) } : {}),
      ...(t.stamps.cancelledAt ? { cancelledAt: new Date(t.stamps.cancelledAt) } : {}),
      ...(t.cancel ? { cancelReasonCode: t.cancel.reasonCode, cancelReason: t.cancel.reason } : {}),
      ...(t.failure ? { failureCode: t.failure.code, failureMessage: t.failure.message } : {}),
      updatedAt: new Date(),
    },
  });
  if (count !== 1) throw new Error(`payment ${paymentId} moved past statusVersion ${t.fromStatusVersion} concurrently`);
  const payment = await tx.payment.findUniqueOrThrow({ where: { id: paymentId } });

  for (const s of t.transferStatuses) {
    await tx.paymentTransfer.updateMany({
      where: { ...parseTransferKey(s.key), paymentId },
      data: { status: s.role && s.role !== 'funding' ? s.role : s.status },
    });
  }
  for (const incident of t.incidents) await recordIncident(tx, payment, incident, t.at);
  if (t.ledger.includes('collection')) await postToLedger(tx, collectionPosting(payment));
  if (t.ledger.includes('settlement')) {
    await postToLedger(tx, settlementPosting(payment));
    await updateTransactionStatus(tx, { sourceType: 'payment', sourceId: paymentId, leg: 'collection', status: 'posted' });
  }
  // Several steps can share a statusVersion and a workflow time (duplicates seen together): the
  // incidents' transfers tell them apart.
  const step = `v${t.fromStatusVersion}@${t.at}:${t.incidents.map((x) => x.transferKey ?? x.kind).join(',')}`;
  await writeEvents(tx, subjectOf(payment), step, paymentEvents(payment, t.events));
}

/** Funds that reached escrow but don't count for the Payment, held for recovery. */
async function recordIncident(
  tx: Prisma.TransactionClient,
  payment: Payment,
  incident: { kind: string; amountAtomic: string; transferKey: string | null },
  at: string,
): Promise<void> {
  const id = `incident_${digest(payment.id, incident.kind, incident.transferKey ?? at)}`;
  const transfer = incident.transferKey
    ? await tx.paymentTransfer.findFirst({ where: { paymentId: payment.id, ...parseTransferKey(incident.transferKey) }, select: { id: true } })
    : null;
  const { count: created } = await tx.paymentIncident.createMany({
    data: [{ id, paymentId: payment.id, kind: incident.kind, status: 'pending', amountAtomic: incident.amountAtomic, transferId: transfer?.id ?? null }],
    skipDuplicates: true,
  });
  // Underpaid funds at expiry were already posted to escrow with the collection; the rest were not.
  if (created === 1 && incident.kind !== 'underpaid_expired') {
    await postToLedger(tx, incidentPosting(payment, id, BigInt(incident.amountAtomic)));
  }
}

/**
 * A transfer the Payment's workflow can no longer take (it has finished): the machine's rule says
 * whether it is late or a duplicate, and it is recorded for recovery with its event. Idempotent: the
 * incident and event ids derive from the transfer. An open Payment's transfer is left to its workflow.
 */
export async function recordTransferAfterClose(prisma: PrismaClient, paymentId: string, transfer: { key: string; amountAtomic: bigint }): Promise<void> {
  await prisma.$transaction(async (tx) => {
    const payment = await tx.payment.findUniqueOrThrow({ where: { id: paymentId } });
    const kind = unusableTransferKind(payment.status as PaymentStatus);
    if (!kind) return;
    await tx.paymentTransfer.updateMany({ where: { paymentId, ...parseTransferKey(transfer.key) }, data: { status: kind } });
    await recordIncident(tx, payment, { kind, amountAtomic: transfer.amountAtomic.toString(), transferKey: transfer.key }, transfer.key);
    const name = kind === 'late' ? 'payment.late_received' : 'payment.duplicate_received';
    await writeEvents(tx, subjectOf(payment), `transfer:${transfer.key}`, paymentEvents(payment, [name]));
  });
}

export async function recordPaymentResolution(prisma: PrismaClient, input: ResolutionRequest & { id: string; paymentId: string }): Promise<void> {
  await prisma.paymentResolution.createMany({
    data: [{ id: input.id, paymentId: input.paymentId, action: input.action, txHash: input.txHash ?? null, reason: input.reason ?? null, actor: input.actor }],
    skipDuplicates: true,
  });
}
