import type { Prisma, PrismaClient } from '../../db/client';
import type { Deposit } from '../../generated/prisma/client';
import { postToLedger, updateTransactionStatus } from '../ledger/ledger';
import { writeEvents, type EventSubject } from '../event-log/events';
import type { DepositStart } from '../engine/pure/engine';
import type { ResolutionRequest } from '../operators/pure/operator-resolution';
import type { DepositEventName } from './pure/deposit-machine';
import { toPersistedState, type PersistedDepositState, type PersistedDepositTransition } from './pure/deposit-serde';
import { heldPosting, receiptPosting, receiptReversalPosting, reversalPosting, settlementPosting } from './deposit-postings';
import { depositStateOf } from './deposit-view';
import { closeUnrecordedHold } from './deposit-unrecorded';

/**
 * Where a deposit's steps are written: the row (conditional on the statusVersion the workflow saw),
 * its events and ledger postings, each step in one transaction. Every deposit event carries the state
 * after the change, and each status change has its own statusVersion: the step of its event ids.
 */

function depositEvents(tx: Prisma.TransactionClient, d: Deposit, names: DepositEventName[]) {
  const subject: EventSubject = {
    appId: d.appId,
    apiVersion: d.apiVersion,
    accountId: d.accountId,
    resourceType: 'deposit',
    resourceId: d.id,
  };
  const payload = {
    depositId: d.id,
    accountId: d.accountId,
    depositAddressId: d.depositAddressId,
    status: d.status,
    statusVersion: d.statusVersion,
  };
  return writeEvents(
    tx,
    subject,
    `v${d.statusVersion}`,
    names.map((name) => ({ name, payload })),
  );
}

async function postLeg(tx: Prisma.TransactionClient, d: Deposit, leg: PersistedDepositTransition['ledger'][number]): Promise<void> {
  if (leg === 'receipt') {
    await postToLedger(tx, receiptPosting(d));
  } else if (leg === 'settlement') {
    await postToLedger(tx, settlementPosting(d));
    await updateTransactionStatus(tx, { sourceType: 'deposit', sourceId: d.id, leg: 'receipt', status: 'posted' });
  } else if (leg === 'receipt_reversal') {
    await postToLedger(tx, receiptReversalPosting(d));
    await updateTransactionStatus(tx, { sourceType: 'deposit', sourceId: d.id, leg: 'receipt', status: 'reversed' });
  } else {
    await postToLedger(tx, reversalPosting(d));
    await updateTransactionStatus(tx, { sourceType: 'deposit', sourceId: d.id, leg: 'receipt', status: 'reversed' });
  }
}

/**
 * Writes one transition: the deposit row (conditional on the statusVersion the caller saw), its events
 * and ledger postings, in the caller's transaction. A retry after the commit finds a newer
 * statusVersion and writes nothing; transitions that keep the statusVersion rewrite the same values.
 */
export async function persistDepositTransition(prisma: PrismaClient, depositId: string, t: PersistedDepositTransition): Promise<void> {
  await prisma.$transaction((tx) => applyDepositTransition(tx, depositId, t));
}

export async function applyDepositTransition(
  tx: Prisma.TransactionClient,
  depositId: string,
  t: PersistedDepositTransition,
): Promise<void> {
  const current = await tx.deposit.findUniqueOrThrow({ where: { id: depositId } });
  if (current.statusVersion > t.fromStatusVersion) return; // already applied by an earlier attempt
  const s = t.state;
  const { count } = await tx.deposit.updateMany({
    where: { id: depositId, statusVersion: t.fromStatusVersion },
    data: {
      status: s.status,
      statusVersion: s.statusVersion,
      settlementStatus: s.settlement.status,
      settlementTxHash: s.settlement.txHash,
      settlementReasonCode: s.settlement.reasonCode,
      settledAt: s.settlement.settledAt ? new Date(s.settlement.settledAt) : null,
      settlementAttempts: s.settlementAttempts,
      actualReceivedAtomic: s.actualReceivedAtomic,
      failureReason: s.failureReason,
      reversedAt: s.reversedAt ? new Date(s.reversedAt) : null,
      updatedAt: new Date(t.at),
    },
  });
  if (count !== 1) throw new Error(`deposit ${depositId} moved past statusVersion ${t.fromStatusVersion} concurrently`);
  const deposit = await tx.deposit.findUniqueOrThrow({ where: { id: depositId } });
  for (const leg of t.ledger) await postLeg(tx, deposit, leg);
  await depositEvents(tx, deposit, t.events);
}

/**
 * Records the deposit as the machine's first state decided it (detected or ignored), with the
 * account's settlement profile snapshot and deposit.detected, in one transaction. Idempotent: the id
 * and the (chainId, txHash, logIndex) key are unique, so a second call writes nothing and every call
 * answers the stored state (which is how a continued or rerun workflow resumes).
 */
export async function recordDepositDetected(
  prisma: PrismaClient,
  input: DepositStart,
  initial: { state: PersistedDepositState; events: DepositEventName[]; at: string },
  workflowId: string,
): Promise<PersistedDepositState> {
  const existing = await prisma.deposit.findUnique({ where: { id: input.depositId } });
  if (existing) return toPersistedState(depositStateOf(existing));
  const address = await prisma.depositAddress.findUniqueOrThrow({ where: { id: input.depositAddressId } });
  const [app, profile] = await Promise.all([
    prisma.app.findUniqueOrThrow({ where: { id: address.appId }, select: { apiVersion: true } }),
    prisma.settlementProfile.findUnique({ where: { accountId: address.accountId } }),
  ]);
  const s = initial.state;
  await prisma.$transaction(async (tx) => {
    const { count } = await tx.deposit.createMany({
      data: [
        {
          id: input.depositId,
          appId: address.appId,
          apiVersion: app.apiVersion,
          accountId: address.accountId,
          depositAddressId: address.id,
          status: s.status,
          statusVersion: s.statusVersion,
          chainId: input.chainId,
          tokenAddress: input.tokenAddress,
          assetSymbol: input.asset.symbol,
          decimals: input.asset.decimals,
          txHash: input.txHash.toLowerCase(),
          logIndex: input.logIndex,
          ordinal: input.ordinal,
          workflowId,
          blockNumber: BigInt(input.blockNumber),
          fromAddress: input.fromAddress.toLowerCase(),
          amountAtomic: s.amountAtomic,
          platformFeeBps: input.fees.platformFeeBps,
          partnerFeeBps: input.fees.partnerFeeBps,
          platformFeeAtomic: s.fees.platformAtomic,
          partnerFeeAtomic: s.fees.partnerAtomic,
          networkFeeAtomic: s.fees.networkAtomic,
          setupFeeAtomic: s.fees.setupAtomic,
          netAtomic: s.fees.netAtomic,
          settlementStatus: s.settlement.status,
          settlementReasonCode: s.settlement.reasonCode,
          settlementProfileSnapshot: (profile?.status === 'active' ? profile.snapshot : {}) as Prisma.InputJsonValue,
          createdAt: new Date(initial.at),
          updatedAt: new Date(initial.at),
        },
      ],
      skipDuplicates: true,
    });
    if (count !== 1) return;
    // A row refused before (held by its alert) is written now: the hold ends with it.
    await closeUnrecordedHold(tx, input.depositId, { action: 'recorded' });
    const created = await tx.deposit.findUniqueOrThrow({ where: { id: input.depositId } });
    if (initial.events.length > 0) await depositEvents(tx, created, initial.events);
    // Under the minimum in an asset the address takes: the funds are ours to hold, so they are booked.
    if (s.status === 'ignored' && s.settlement.reasonCode === 'below_minimum' && created.amountAtomic.gt(0)) {
      await postToLedger(tx, heldPosting(created));
    }
  });
  return toPersistedState(depositStateOf(await prisma.deposit.findUniqueOrThrow({ where: { id: input.depositId } })));
}

export async function recordDepositResolution(
  prisma: PrismaClient,
  input: ResolutionRequest & { id: string; depositId: string },
): Promise<void> {
  await prisma.depositResolution.createMany({
    data: [
      {
        id: input.id,
        depositId: input.depositId,
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
 * Where a deposit held for a data error stood, read from the books: only a deposit that was settling
 * has its receipt posted (the move to settling posts it, in one transaction). One not yet settling
 * resumes at confirming (from detected, that is the step that follows anyway).
 */
export async function dataHoldFrom(prisma: PrismaClient, depositId: string): Promise<'confirming' | 'settling'> {
  const receipt = await prisma.ledgerPosting.count({ where: { sourceType: 'deposit', sourceId: depositId, leg: 'receipt' } });
  return receipt > 0 ? 'settling' : 'confirming';
}
