import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Address, Hash, Hex } from 'viem';
import type { Prisma, PrismaClient } from '../src/db/client';
import { checkSettlementLegs } from '../src/chain/settlement-legs';
import type { ChainRegistry } from '../src/chain/registry';
import { NonceAlreadyUsedError, type Transfer } from '../src/chain/types';
import type { Custody } from '../src/custody';
import { toAtomic } from '../src/domain/amounts';
import { LedgerError, postToLedger, updateTransactionStatus } from '../src/domain/ledger/ledger';
import { onSourceInvalidated, type DepositEventName, type SourceOutcome } from '../src/domain/deposits/deposit-machine';
import { toPersistedState, toPersistedTransition, type PersistedDepositState, type PersistedDepositTransition } from '../src/domain/deposits/deposit-serde';
import { depositStateOf } from '../src/domain/deposits/deposit-view';
import { depositIdFor } from '../src/domain/deposits/deposit-keys';
import { receiptPosting, receiptReversalPosting, reversalPosting, settlementPosting } from '../src/domain/deposits/deposit-postings';
import type { Deposit } from '../src/generated/prisma/client';
import {
  DEPOSIT_SETTLEMENT_REFUSED,
  DEPOSIT_WORKFLOW,
  depositWorkflowId,
  type DepositSettlementPolicy,
  type DepositWorkflowInput,
} from '../workflows/deposit-api';
import type { TransferHandler } from './chain-scanner';
import type { TreasuryPolicy } from './payments';

/** Settlement retry budget and polling, the same for every deposit (see docs/decisions.md `## Deposits`). */
export const DEPOSIT_SETTLEMENT_POLICY: DepositSettlementPolicy = {
  maxAttempts: 3,
  retryBackoffSeconds: 5,
  confirmationPollSeconds: 1,
  maxConfirmationChecks: 600,
};

export interface DepositSettlementLeg {
  leg: 'net' | 'platform_fee' | 'partner_fee';
  to: string;
  amountAtomic: string;
  nonce: number;
  txHash: string;
  serialized: string;
  /** replaced: its nonce went to another transaction before it was mined, so it never will be. */
  status: 'broadcast' | 'confirmed' | 'reverted' | 'replaced';
}

const digest = (...parts: string[]) => createHash('sha256').update(parts.join('|')).digest('hex').slice(0, 24);

// ---------------------------------------------------------------------------------------------------
// The chain scanner's handler: a transfer to a deposit address starts that transfer's DepositWorkflow.

export interface DepositTransferHandlerDeps {
  prisma: PrismaClient;
  chains: ChainRegistry;
  temporal: Client;
  /** Where deposit workflows run; defaults to the task queue of the scan activity calling the handler. */
  taskQueue?: string;
  policy?: DepositSettlementPolicy;
}

/**
 * Owns transfers whose recipient is a deposit address. The workflow id is derived from the transfer,
 * and Temporal refuses a second workflow with that id (running, or completed: ALLOW_DUPLICATE_FAILED_ONLY
 * only lets a failed or terminated run be started again, which then resumes from the stored deposit),
 * so a rescan, a restarted scanner or a replayed activity makes one deposit, with no check-then-insert.
 */
export function createDepositTransferHandler(deps: DepositTransferHandlerDeps): TransferHandler {
  return async (transfer: Transfer) => {
    const address = await deps.prisma.depositAddress.findUnique({ where: { address: transfer.to.toLowerCase() } });
    if (!address || address.chainId !== transfer.chainId) return false;
    const network = deps.chains.network(transfer.chainId);
    const asset = network.assets.find((a) => a.tokenAddress.toLowerCase() === transfer.token.toLowerCase());
    if (!asset) return false; // the scanner only reads configured assets; nothing to own otherwise
    const input: DepositWorkflowInput = {
      depositId: depositIdFor(transfer.chainId, transfer.txHash, transfer.logIndex),
      depositAddressId: address.id,
      chainId: transfer.chainId,
      txHash: transfer.txHash.toLowerCase(),
      logIndex: transfer.logIndex,
      blockNumber: transfer.blockNumber.toString(),
      tokenAddress: asset.tokenAddress,
      fromAddress: transfer.from.toLowerCase(),
      toAddress: transfer.to.toLowerCase(),
      amountAtomic: transfer.amountAtomic.toString(),
      asset: { symbol: asset.symbol, decimals: asset.decimals },
      assetAccepted: address.tokenAddress.toLowerCase() === asset.tokenAddress.toLowerCase(),
      minimumDeposit: { amountAtomic: toAtomic(asset.minimumDeposit.amount, asset.decimals).toString(), inclusive: asset.minimumDeposit.inclusive },
      fees: { platformFeeBps: address.platformFeeBps, partnerFeeBps: address.partnerFeeBps },
      confirmations: network.confirmations,
      policy: deps.policy ?? DEPOSIT_SETTLEMENT_POLICY,
    };
    try {
      await deps.temporal.workflow.start(DEPOSIT_WORKFLOW, {
        // By default the scanner's own task queue: the one worker runs every workflow of the service.
        taskQueue: deps.taskQueue ?? Context.current().info.taskQueue,
        workflowId: depositWorkflowId(transfer.chainId, transfer.txHash, transfer.logIndex),
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
        args: [input],
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    return true;
  };
}

// ---------------------------------------------------------------------------------------------------
// Persistence: one transaction per step, deterministic ids, conditional on statusVersion.

function eventRows(d: Deposit, names: DepositEventName[], at: string) {
  return names.map((name) => ({
    id: `evt_${digest(d.id, name, String(d.statusVersion))}`,
    appId: d.appId,
    name,
    apiVersion: d.apiVersion,
    accountId: d.accountId,
    resourceType: 'deposit',
    resourceId: d.id,
    payload: {
      depositId: d.id,
      accountId: d.accountId,
      depositAddressId: d.depositAddressId,
      status: d.status,
      statusVersion: d.statusVersion,
    },
    createdAt: new Date(at),
  }));
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
export async function persistDepositTransition(tx: Prisma.TransactionClient, depositId: string, t: PersistedDepositTransition): Promise<void> {
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
  if (t.events.length > 0) await tx.event.createMany({ data: eventRows(deposit, t.events, t.at), skipDuplicates: true });
}

/** Ledger refusals are business refusals: never retried. */
async function inTransaction(prisma: PrismaClient, fn: (tx: Prisma.TransactionClient) => Promise<void>): Promise<void> {
  try {
    await prisma.$transaction(fn);
  } catch (err) {
    if (err instanceof LedgerError) throw ApplicationFailure.create({ type: err.type, message: err.message, details: [err.details], nonRetryable: true });
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------

export interface DepositActivityDeps {
  prisma: PrismaClient;
  chains: ChainRegistry;
  custody: Custody;
  treasury: TreasuryPolicy;
}

export function createDepositActivities(deps: DepositActivityDeps) {
  const { prisma, chains, custody } = deps;

  const loadDeposit = (depositId: string) =>
    prisma.deposit.findUniqueOrThrow({ where: { id: depositId }, include: { depositAddress: true } });

  /**
   * Runs fn while holding a PostgreSQL advisory lock (released when the holding transaction ends).
   * The transaction is only the mutex: fn writes through `prisma`, so what it records is committed
   * before anything is broadcast.
   */
  async function withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return prisma.$transaction(
      async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${key}))`;
        return fn();
      },
      { maxWait: 10_000, timeout: 90_000 },
    );
  }

  /** Tops the sender up with gas from the treasury when it is low (one treasury sender at a time). */
  async function ensureGas(chain: ReturnType<ChainRegistry['get']>, chainId: number, address: Address): Promise<void> {
    if ((await chain.getNativeBalance(address)) >= deps.treasury.minGasWei) return;
    await withLock(`treasury:${chainId}`, async () => {
      if ((await chain.getNativeBalance(address)) >= deps.treasury.minGasWei) return;
      const treasury = custody.signer({ purpose: 'treasury', index: 0 });
      const topUp = await chain.sendNative({ from: treasury, to: address, amountWei: deps.treasury.topUpWei });
      if ((await chain.getTransactionStatus(topUp, 1)) !== 'confirmed') throw new Error(`gas top-up ${topUp} not mined yet`);
    });
  }

  function refuse(reason: string, message: string): never {
    throw ApplicationFailure.create({ type: DEPOSIT_SETTLEMENT_REFUSED, message, details: [reason], nonRetryable: true });
  }

  return {
    /**
     * Records the deposit as the machine's first state decided it (detected or ignored), with the
     * account's settlement profile snapshot and deposit.detected, in one transaction. Idempotent: the id
     * and the (chainId, txHash, logIndex) key are unique, so a second call writes nothing and every call
     * answers the stored state (which is how a continued or rerun workflow resumes).
     */
    async recordDepositDetected(
      input: DepositWorkflowInput,
      initial: { state: PersistedDepositState; events: DepositEventName[]; at: string },
    ): Promise<PersistedDepositState> {
      const existing = await prisma.deposit.findUnique({ where: { id: input.depositId } });
      if (existing) return toPersistedState(depositStateOf(existing));
      const address = await prisma.depositAddress.findUniqueOrThrow({ where: { id: input.depositAddressId } });
      const [app, profile] = await Promise.all([
        prisma.app.findUniqueOrThrow({ where: { id: address.appId }, select: { apiVersion: true } }),
        prisma.settlementProfile.findUnique({ where: { accountId: address.accountId } }),
      ]);
      const s = initial.state;
      await inTransaction(prisma, async (tx) => {
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
        if (count === 1 && initial.events.length > 0) {
          const created = await tx.deposit.findUniqueOrThrow({ where: { id: input.depositId } });
          await tx.event.createMany({ data: eventRows(created, initial.events, initial.at), skipDuplicates: true });
        }
      });
      return toPersistedState(depositStateOf(await prisma.deposit.findUniqueOrThrow({ where: { id: input.depositId } })));
    },

    async persistDepositTransition(depositId: string, t: PersistedDepositTransition): Promise<void> {
      await inTransaction(prisma, (tx) => persistDepositTransition(tx, depositId, t));
    },

    async recordDepositResolution(input: { id: string; depositId: string; action: string; txHash?: string; reason?: string; actor: string }) {
      await prisma.depositResolution.createMany({
        data: [
          { id: input.id, depositId: input.depositId, action: input.action, txHash: input.txHash ?? null, reason: input.reason ?? null, actor: input.actor },
        ],
        skipDuplicates: true,
      });
    },

    /** Re-reads the source transfer at the confirmation depth; one no longer in the canonical chain is dropped. */
    async verifyDepositSource(input: {
      chainId: number;
      txHash: string;
      logIndex: number;
      tokenAddress: string;
      toAddress: string;
      confirmations: number;
    }): Promise<SourceOutcome> {
      const v = await chains.get(input.chainId).verifyTransfer({
        txHash: input.txHash as Hash,
        logIndex: input.logIndex,
        token: input.tokenAddress as Address,
        to: input.toAddress as Address,
        confirmations: input.confirmations,
      });
      return v.status === 'confirmed' ? 'confirmed' : v.status === 'pending' ? 'pending' : 'dropped';
    },

    /**
     * Pays the net amount to the settlement destination captured at detection and the fees to the fee
     * wallets, from the deposit address (gas topped up from the treasury). Each leg is signed once,
     * recorded before it is broadcast and re-broadcast byte for byte on retry, so a retry can never
     * pay twice (same nonce, same transaction).
     */
    async broadcastDepositSettlement(input: { depositId: string }): Promise<{ txHash: string }> {
      const d = await loadDeposit(input.depositId);
      const snapshot = d.settlementProfileSnapshot as { destinationAddress?: string; chainId?: number; tokenAddress?: string };
      if (!snapshot.destinationAddress) refuse('settlement_destination_missing', `deposit ${d.id} has no settlement destination`);
      if (snapshot.chainId !== d.chainId || String(snapshot.tokenAddress).toLowerCase() !== d.tokenAddress.toLowerCase()) {
        refuse('settlement_destination_mismatch', `deposit ${d.id} is in another asset than its settlement destination`);
      }
      const chain = chains.get(d.chainId);
      const from = custody.signer({ purpose: 'deposit', index: d.depositAddress.custodyIndex });
      const plans = [
        { leg: 'net' as const, to: snapshot.destinationAddress, amountAtomic: BigInt(d.netAtomic.toString()) },
        { leg: 'platform_fee' as const, to: custody.deriveAddress({ purpose: 'fee', index: 0 }), amountAtomic: BigInt(d.platformFeeAtomic.toString()) },
        { leg: 'partner_fee' as const, to: custody.deriveAddress({ purpose: 'fee', index: 1 }), amountAtomic: BigInt(d.partnerFeeAtomic.toString()) },
      ].filter((p) => p.amountAtomic > 0n);

      // A reusable address settles many deposits: one sender at a time, so nonces never collide.
      return withLock(`deposit-address:${d.depositAddressId}`, async () => {
        const fresh = await loadDeposit(d.id);
        const stored = [...((fresh.settlementLegs as unknown as DepositSettlementLeg[]) ?? [])];
        const live = (leg: string) => stored.find((l) => l.leg === leg && l.status !== 'reverted' && l.status !== 'replaced');
        const save = () => prisma.deposit.update({ where: { id: d.id }, data: { settlementLegs: stored as unknown as Prisma.InputJsonValue } });

        for (const plan of plans) {
          const existing = live(plan.leg);
          if (existing) {
            try {
              await chain.broadcast(existing.serialized as Hex);
              continue;
            } catch (err) {
              // Its nonce went to another transaction, and it was never mined: it never can be, so
              // signing this leg again can't pay twice.
              if (!(err instanceof NonceAlreadyUsedError) || (await chain.getTransactionStatus(existing.txHash as Hash, 1)) !== 'not_found') throw err;
              existing.status = 'replaced';
              await save();
            }
          }
          await ensureGas(chain, d.chainId, from.address);
          const nonce = await chain.getNonce(from.address, 'pending');
          const signed = await chain.signTokenTransfer({
            from,
            token: d.tokenAddress as Address,
            to: plan.to as Address,
            amountAtomic: plan.amountAtomic,
            nonce,
          });
          stored.push({
            leg: plan.leg,
            to: plan.to.toLowerCase(),
            amountAtomic: plan.amountAtomic.toString(),
            nonce: signed.nonce,
            txHash: signed.txHash,
            serialized: signed.serialized,
            status: 'broadcast',
          });
          // Recorded (committed) before it is broadcast: a retry re-sends these bytes instead of signing again.
          await save();
          await chain.broadcast(signed);
        }
        const net = live('net');
        if (!net) refuse('settlement_destination_missing', `deposit ${d.id} has no net amount to settle`);
        return { txHash: net.txHash };
      });
    },

    /** confirmed when every leg is confirmed; reverted as soon as one reverted (that leg is marked). */
    async checkDepositSettlement(input: { depositId: string; confirmations: number }): Promise<'confirmed' | 'pending' | 'reverted'> {
      const d = await loadDeposit(input.depositId);
      const chain = chains.get(d.chainId);
      const all = d.settlementLegs as unknown as DepositSettlementLeg[];
      const outcome = await checkSettlementLegs(chain, all, input.confirmations);
      await prisma.deposit.update({ where: { id: d.id }, data: { settlementLegs: all as unknown as Prisma.InputJsonValue } });
      return outcome;
    },

    /** Settled deposits to re-verify, in id order, one page after `afterId`. */
    async listDepositsToReconcile(input: { settledSince: string; afterId?: string; limit: number }): Promise<string[]> {
      const rows = await prisma.deposit.findMany({
        where: { status: 'settled', settledAt: { gte: new Date(input.settledSince) }, ...(input.afterId ? { id: { gt: input.afterId } } : {}) },
        orderBy: { id: 'asc' },
        take: input.limit,
        select: { id: true },
      });
      return rows.map((r) => r.id);
    },

    /**
     * Re-verifies one settled deposit's source transfer at the confirmation depth. Still there: valid.
     * Not deep enough right now (e.g. re-included after a reorg): pending, looked at again next pass.
     * Gone (not canonical, unknown, reverted): the deposit is reversed, with deposit.reversed and the
     * reversing posting in the same transaction.
     */
    async reconcileDeposit(input: { depositId: string; at: string }): Promise<'valid' | 'pending' | 'reversed' | 'skipped'> {
      const d = await loadDeposit(input.depositId);
      if (d.status !== 'settled' || !d.depositAddress.address) return 'skipped';
      const network = chains.network(d.chainId);
      const v = await chains.get(d.chainId).verifyTransfer({
        txHash: d.txHash as Hash,
        logIndex: d.logIndex,
        token: d.tokenAddress as Address,
        to: d.depositAddress.address as Address,
        confirmations: network.confirmations,
      });
      if (v.status === 'confirmed') return 'valid';
      if (v.status === 'pending') return 'pending';
      const t = onSourceInvalidated(depositStateOf(d), input.at);
      if (!t) return 'skipped';
      await inTransaction(prisma, (tx) => persistDepositTransition(tx, d.id, toPersistedTransition(t, input.at)));
      return 'reversed';
    },
  };
}

export type DepositActivities = ReturnType<typeof createDepositActivities>;
