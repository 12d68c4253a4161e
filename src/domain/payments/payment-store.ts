import { createHash } from 'node:crypto';
import type { Prisma, PrismaClient } from '../../db/client';
import { parseTransferKey, transferKey } from '../../chain/transfer-key';
import type { Payment, PaymentPayout } from '../../generated/prisma/client';
import { postToLedger, updateTransactionStatus, type LedgerAsset } from '../ledger/ledger';
import { writeEvents } from '../event-log/events';
import { paymentEventIds, paymentSubject } from './payment-origin';
import type { TransferSeen } from '../engine/pure/engine';
import type { ResolutionRequest } from '../operators/pure/operator-resolution';
import type { PaymentEventName, PaymentState, TransferRole } from './pure/payment-machine';
import { payerShares } from './payer-shares';
import {
  collectionPosting,
  incidentPosting,
  payoutPosting,
  payoutReturnedPosting,
  providerSettlementPosting,
  settlementPosting,
} from './payment-postings';
import type { CarriedPaymentState, PersistedTransition } from './pure/payment-serde';

/**
 * Where a Payment's steps are written: the row (conditional on the statusVersion the workflow saw),
 * its events, incidents, transfer statuses and ledger postings, each step in one transaction. Every id
 * derives from (Payment, step), so a retried step writes nothing twice. A step that moves the status
 * is found applied by its statusVersion; one that keeps it (a duplicate received, a hold) by its
 * events' ids, which derive from the step's id (activities/step-id.ts), never from the clock.
 */

const digest = (...parts: string[]) => createHash('sha256').update(parts.join('|')).digest('hex').slice(0, 24);

/**
 * Every Payment event carries the state after the change. bank_funding.* (the fiat leg to the bank
 * account completed or failed) carry the bank account and the fiat amount too.
 */
function paymentEvents(p: Payment, names: PaymentEventName[], payout: PaymentPayout | null) {
  const payload = {
    ...paymentEventIds(p),
    status: p.status,
    statusVersion: p.statusVersion,
    operationalState: p.operationalState,
    operationalReasonCode: p.operationalReasonCode,
    ...(payout ? { offrampStatus: p.offrampStatus } : {}),
  };
  return names.map((name) =>
    name.startsWith('bank_funding.') && payout
      ? {
          name,
          payload: {
            ...payload,
            bankAccountId: payout.bankAccountId,
            destinationAmount: payout.destinationAmount,
            destinationCurrency: payout.destinationCurrency,
            reasonCode: payout.reasonCode,
          },
        }
      : { name, payload },
  );
}

export async function persistPaymentTransition(
  prisma: PrismaClient,
  paymentId: string,
  t: PersistedTransition,
  stepId: string,
): Promise<void> {
  await prisma.$transaction((tx) => applyPaymentTransition(tx, paymentId, t, stepId));
}

async function applyPaymentTransition(
  tx: Prisma.TransactionClient,
  paymentId: string,
  t: PersistedTransition,
  stepId: string,
): Promise<void> {
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
      ...(t.pendingAtomic === undefined ? {} : { pendingAtomic: t.pendingAtomic }),
      settlementTxHash: t.settlementTxHash,
      ...(t.payout ? { offrampStatus: t.payout.offrampStatus } : {}),
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
  if (t.payout) {
    await tx.paymentPayout.update({
      where: { paymentId },
      data: {
        payoutStatus: t.payout.offrampStatus,
        refundTxHash: t.payout.refundTxHash,
        ...(t.payoutReasonCode !== undefined ? { reasonCode: t.payoutReasonCode } : {}),
      },
    });
  }
  const payout = await tx.paymentPayout.findUnique({ where: { paymentId } });

  for (const s of t.transferStatuses) {
    // Steps written before roles had their own column put a non-funding role in status.
    const legacyRole = s.role === undefined && ['duplicate', 'late', 'excess'].includes(s.status) ? s.status : undefined;
    await tx.paymentTransfer.updateMany({
      where: transferWhere(paymentId, s.key),
      // A step without roles came from a run that only followed funding transfers.
      data: legacyRole ? { status: 'confirmed', role: legacyRole } : { status: s.status, role: s.role ?? 'funding' },
    });
  }
  for (const incident of t.incidents) await recordIncident(tx, payment, incident, t.at);
  if (t.ledger.includes('collection')) await postToLedger(tx, collectionPosting(payment));
  if (t.ledger.includes('settlement')) {
    await postToLedger(tx, payout ? providerSettlementPosting(payment, payout) : settlementPosting(payment));
    await updateTransactionStatus(tx, { sourceType: 'payment', sourceId: paymentId, leg: 'collection', status: 'posted' });
  }
  if (payout && t.ledger.includes('payout')) await postToLedger(tx, payoutPosting(payment, payout));
  if (payout && t.ledger.includes('payout_returned')) await postToLedger(tx, payoutReturnedPosting(payment, payout));
  await writeEvents(tx, paymentSubject(payment), stepId, paymentEvents(payment, t.events, payout));
}

/** Transfer statuses the dust sweep follows (dust.ts), never a Payment's workflow. */
export const SWEPT_TRANSFER_STATUSES = ['dust', 'dust_confirmed', 'dust_dropped', 'foreign', 'foreign_confirmed', 'foreign_dropped'];

/**
 * Funds that reached escrow but don't count for the Payment: recorded once, and posted as escrow
 * holdings, one incident per payer whose money it is (see incidentParts).
 */
export async function recordIncident(
  tx: Prisma.TransactionClient,
  payment: Payment,
  incident: { kind: string; amountAtomic: string; transferKey: string | null; asset?: LedgerAsset },
  at: string,
): Promise<void> {
  const parts = await incidentParts(tx, payment.id, incident);
  for (const part of parts) {
    // One part keeps the id incidents always had; several are told apart by their payer.
    const id = `incident_${parts.length === 1 ? digest(payment.id, incident.kind, incident.transferKey ?? at) : digest(payment.id, incident.kind, at, part.fromAddress ?? '')}`;
    const { count: created } = await tx.paymentIncident.createMany({
      data: [
        {
          id,
          paymentId: payment.id,
          kind: incident.kind,
          status: 'pending',
          amountAtomic: part.amountAtomic.toString(),
          transferId: part.transferId,
          fromAddress: part.fromAddress,
          ...(incident.asset ? { chainId: incident.asset.chainId, tokenAddress: incident.asset.tokenAddress.toLowerCase() } : {}),
        },
      ],
      skipDuplicates: true,
    });
    if (created === 1) await postToLedger(tx, incidentPosting(payment, { id, kind: incident.kind }, part.amountAtomic, incident.asset));
  }
}

/**
 * Whose money an incident is. One with a transfer of its own: that transfer's sender. One without
 * (underpaid at expiry, funded on a lapsed quote) is what the Payment's funding counted: one part per
 * payer, each its share, so each payer is paid back what it paid. Shares that don't add up to the
 * incident (not expected) leave it whole and nobody's: an operator names where it goes.
 */
async function incidentParts(
  tx: Prisma.TransactionClient,
  paymentId: string,
  incident: { amountAtomic: string; transferKey: string | null },
) {
  const whole = BigInt(incident.amountAtomic);
  if (incident.transferKey) {
    const transfer = await tx.paymentTransfer.findFirst({
      where: transferWhere(paymentId, incident.transferKey),
      select: { id: true, fromAddress: true },
    });
    return [{ transferId: transfer?.id ?? null, fromAddress: transfer?.fromAddress.toLowerCase() ?? null, amountAtomic: whole }];
  }
  const shares = await payerShares(tx, paymentId);
  if (shares.reduce((acc, s) => acc + s.amountAtomic, 0n) !== whole) return [{ transferId: null, fromAddress: null, amountAtomic: whole }];
  return shares.map((s) => ({ transferId: null, fromAddress: s.address, amountAtomic: s.amountAtomic }));
}

/** A transfer row by its key: by its place in its transaction, or (recorded before ordinals) by log index. */
function transferWhere(paymentId: string, key: string) {
  const k = parseTransferKey(key);
  return k.ordinal !== undefined
    ? { paymentId, txHash: k.txHash, ordinal: k.ordinal }
    : { paymentId, chainId: k.chainId, txHash: k.txHash, logIndex: k.logIndex };
}

export async function recordPaymentResolution(
  prisma: PrismaClient,
  input: ResolutionRequest & { id: string; paymentId: string },
): Promise<void> {
  await prisma.paymentResolution.createMany({
    data: [
      {
        id: input.id,
        paymentId: input.paymentId,
        action: input.action,
        txHash: input.txHash ?? null,
        reason: input.reason ?? null,
        actor: input.actor,
      },
    ],
    skipDuplicates: true,
  });
}

/**
 * The machine state as the database has it, for a run that starts again for a Payment whose
 * workflow had finished (a late transfer) or never started, and the transfers recorded for it that no
 * run has taken yet (their signal may be lost): the run takes those as if just seen. The settlement
 * budget starts afresh.
 */
export async function loadPaymentState(
  prisma: PrismaClient,
  paymentId: string,
): Promise<{ state: CarriedPaymentState; unacknowledged: TransferSeen[] }> {
  const p = await prisma.payment.findUniqueOrThrow({
    where: { id: paymentId },
    // Dust and foreign transfers are followed by the dust sweep, never by a workflow.
    include: {
      payout: true,
      transfers: { where: { status: { notIn: SWEPT_TRANSFER_STATUSES } }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
    },
  });
  const keyOf = (t: { chainId: number; txHash: string; ordinal: number }) => transferKey({ ...t, to: p.escrowAddress ?? '' });
  const state: CarriedPaymentState = {
    intent: p.intent as PaymentState['intent'],
    status: p.status as PaymentState['status'],
    stage: p.stage as PaymentState['stage'],
    operationalState: p.operationalState as PaymentState['operationalState'],
    operationalReasonCode: p.operationalReasonCode,
    statusVersion: p.statusVersion,
    requiredAtomic: p.amountAtomic.toFixed(),
    confirmedAtomic: p.receivedAtomic.toFixed(),
    transfers: p.transfers
      .filter((t) => t.role !== null)
      .map((t) => ({
        key: keyOf(t),
        amountAtomic: t.amountAtomic.toFixed(),
        status: t.status as PaymentState['transfers'][number]['status'],
        role: t.role as TransferRole,
      })),
    settlementAttempts: 0,
    settlementTxHash: p.settlementTxHash,
    ...(p.payout
      ? {
          payout: {
            quoteExpiresAt: p.payout.quoteExpiresAt.toISOString(),
            offrampStatus: p.payout.payoutStatus as NonNullable<PaymentState['payout']>['offrampStatus'],
            refundTxHash: p.payout.refundTxHash,
          },
        }
      : {}),
  };
  const unacknowledged = p.transfers
    .filter((t) => t.role === null)
    .map((t) => ({ key: keyOf(t), txHash: t.txHash, logIndex: t.logIndex, amountAtomic: t.amountAtomic.toFixed() }));
  return { state, unacknowledged };
}
