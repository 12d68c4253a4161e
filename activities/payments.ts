import { createHash } from 'node:crypto';
import type { Address, Hash, Hex } from 'viem';
import { Prisma, type PrismaClient } from '../src/db/client';
import type { ChainRegistry } from '../src/chain/registry';
import { checkSettlementLegs } from '../src/chain/settlement-legs';
import type { Custody } from '../src/custody';
import { bookFor, postToLedger, updateTransactionStatus, type PostingInput } from '../src/domain/ledger/ledger';
import type { Payment } from '../src/generated/prisma/client';
import type { PaymentEventName } from '../src/domain/payments/payment-machine';

/** A payment machine transition in JSON-safe form (amounts as strings): what one activity persists. */
export interface PersistedTransition {
  fromStatusVersion: number;
  statusVersion: number;
  status: string;
  stage: string | null;
  operationalState: string;
  operationalReasonCode: string | null;
  confirmedAtomic: string;
  settlementTxHash: string | null;
  events: PaymentEventName[];
  stamps: Partial<Record<'acceptedAt' | 'succeededAt' | 'cancelledAt', string>>;
  incidents: Array<{ kind: string; amountAtomic: string; transferKey: string | null }>;
  transferStatuses: Array<{ key: string; status: string; role?: string }>;
  ledger: Array<'collection' | 'settlement'>;
  cancel: { reasonCode: string; reason: string | null } | null;
  failure: { code: string; message: string } | null;
  /** Identifies the step (workflow time, or the transfer for a late one): row ids derive from it. */
  at: string;
}

export interface SettlementLeg {
  leg: 'net' | 'platform_fee' | 'partner_fee';
  to: string;
  amountAtomic: string;
  nonce: number;
  txHash: string;
  serialized: string;
  status: 'broadcast' | 'confirmed' | 'reverted';
}

export interface TreasuryPolicy {
  /** Escrow addresses below this native balance get topped up before settlement. */
  minGasWei: bigint;
  topUpWei: bigint;
}

export interface PaymentActivityDeps {
  prisma: PrismaClient;
  chains: ChainRegistry;
  custody: Custody;
  treasury: TreasuryPolicy;
}

const digest = (...parts: string[]) => createHash('sha256').update(parts.join('|')).digest('hex').slice(0, 24);

/** Transfer keys are `chainId:txHash:logIndex`. */
export function transferKey(chainId: number, txHash: string, logIndex: number): string {
  return `${chainId}:${txHash.toLowerCase()}:${logIndex}`;
}

function parseKey(key: string): { chainId: number; txHash: string; logIndex: number } {
  const [chainId, txHash, logIndex] = key.split(':');
  return { chainId: Number(chainId), txHash: String(txHash), logIndex: Number(logIndex) };
}

function asset(p: Payment) {
  return { chainId: p.chainId, tokenAddress: p.tokenAddress, symbol: p.assetCode, decimals: p.decimals };
}

/** The UPA whose money escrow holds: the recipient's for a receive Payment, the sender's for a send. */
function escrowOwner(p: Payment): string {
  return p.senderAccountId ?? p.recipientAccountId;
}

function collectionPosting(p: Payment): PostingInput {
  const gross = BigInt(p.amountAtomic.toString());
  const transactions: NonNullable<PostingInput['transactions']> = [
    {
      accountId: p.recipientAccountId,
      direction: 'received',
      senderAccountId: p.senderAccountId,
      receiverAccountId: p.recipientAccountId,
      amountAtomic: gross,
      status: 'pending',
      financialLegKind: 'collection',
      paymentId: p.id,
      description: p.description,
    },
  ];
  if (p.senderAccountId) {
    transactions.push({ ...transactions[0]!, accountId: p.senderAccountId, direction: 'sent' });
  }
  return {
    appId: p.appId,
    sourceType: 'payment',
    sourceId: p.id,
    leg: 'collection',
    asset: asset(p),
    description: `Payment ${p.id} funded escrow`,
    entries: [
      { book: bookFor('escrow', p.id), amountAtomic: gross, accountId: escrowOwner(p) },
      { book: bookFor('external', p.chainId), amountAtomic: -gross },
    ],
    transactions,
  };
}

function settlementPosting(p: Payment): PostingInput {
  const gross = BigInt(p.amountAtomic.toString());
  const entries: PostingInput['entries'] = [
    { book: bookFor('escrow', p.id), amountAtomic: -gross, accountId: escrowOwner(p) },
    { book: bookFor('upa_settled', p.recipientAccountId), amountAtomic: BigInt(p.merchantNetAtomic.toString()) },
  ];
  const platform = BigInt(p.platformFeeAtomic.toString());
  const partner = BigInt(p.partnerFeeAtomic.toString());
  if (platform > 0n) entries.push({ book: bookFor('platform_fees'), amountAtomic: platform });
  if (partner > 0n) entries.push({ book: bookFor('partner_fees', p.appId), amountAtomic: partner });
  return {
    appId: p.appId,
    sourceType: 'payment',
    sourceId: p.id,
    leg: 'settlement',
    asset: asset(p),
    description: `Payment ${p.id} settled to the recipient's destination`,
    entries,
  };
}

/** Funds that reached escrow but don't count for the Payment still sit in custody: the ledger says so. */
function incidentPosting(p: Payment, incidentId: string, amountAtomic: bigint): PostingInput {
  return {
    appId: p.appId,
    sourceType: 'payment',
    sourceId: p.id,
    leg: `incident:${incidentId}`,
    asset: asset(p),
    description: `Funds held for recovery on Payment ${p.id}`,
    entries: [
      { book: bookFor('escrow', p.id), amountAtomic, accountId: escrowOwner(p) },
      { book: bookFor('external', p.chainId), amountAtomic: -amountAtomic },
    ],
  };
}

/**
 * Writes one transition: the Payment row (conditional on the statusVersion the workflow saw), its
 * events, incidents, transfer statuses and ledger postings, in one transaction. Every id is derived
 * from (payment, step), so a retried activity writes nothing twice.
 */
export async function persistTransition(tx: Prisma.TransactionClient, paymentId: string, t: PersistedTransition): Promise<void> {
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
    const k = parseKey(s.key);
    await tx.paymentTransfer.updateMany({
      where: { chainId: k.chainId, txHash: k.txHash, logIndex: k.logIndex, paymentId },
      data: { status: s.role && s.role !== 'funding' ? s.role : s.status },
    });
  }
  for (const incident of t.incidents) {
    const id = `incident_${digest(paymentId, incident.kind, incident.transferKey ?? t.at)}`;
    const transfer = incident.transferKey
      ? await tx.paymentTransfer.findFirst({ where: { paymentId, ...parseKey(incident.transferKey) }, select: { id: true } })
      : null;
    const { count: created } = await tx.paymentIncident.createMany({
      data: [{ id, paymentId, kind: incident.kind, status: 'pending', amountAtomic: incident.amountAtomic, transferId: transfer?.id ?? null }],
      skipDuplicates: true,
    });
    // Underpaid funds at expiry were already posted to escrow with the collection; the rest were not.
    if (created === 1 && incident.kind !== 'underpaid_expired') {
      await postToLedger(tx, incidentPosting(payment, id, BigInt(incident.amountAtomic)));
    }
  }
  if (t.ledger.includes('collection')) await postToLedger(tx, collectionPosting(payment));
  if (t.ledger.includes('settlement')) {
    await postToLedger(tx, settlementPosting(payment));
    await updateTransactionStatus(tx, { sourceType: 'payment', sourceId: paymentId, leg: 'collection', status: 'posted' });
  }
  if (t.events.length > 0) {
    await tx.event.createMany({
      data: t.events.map((name, i) => ({
        id: `evt_${digest(paymentId, t.at, name, String(i), String(t.fromStatusVersion), t.status, t.operationalState, t.incidents.map((x) => x.transferKey ?? x.kind).join(','))}`,
        appId: payment.appId,
        name,
        apiVersion: payment.apiVersion,
        accountId: payment.recipientAccountId,
        resourceType: 'payment',
        resourceId: paymentId,
        payload: {
          paymentId,
          accountId: payment.recipientAccountId,
          status: payment.status,
          statusVersion: payment.statusVersion,
          operationalState: payment.operationalState,
          operationalReasonCode: payment.operationalReasonCode,
        },
        createdAt: new Date(),
      })),
      skipDuplicates: true,
    });
  }
}

/** Waits (bounded) for a transaction to be mined: a chain with interval mining takes a block time. */
export async function waitUntilMined(chain: { getTransactionStatus(hash: Hash, confirmations: number): Promise<string> }, hash: Hash, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await chain.getTransactionStatus(hash, 1);
    if (status === 'confirmed') return;
    if (status === 'reverted') throw new Error(`transaction ${hash} reverted`);
    if (Date.now() > deadline) throw new Error(`transaction ${hash} not mined within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function createPaymentActivities(deps: PaymentActivityDeps) {
  const { prisma, chains, custody } = deps;

  const loadPayment = (paymentId: string) => prisma.payment.findUniqueOrThrow({ where: { id: paymentId } });

  function plannedLegs(p: Payment): Array<{ leg: SettlementLeg['leg']; to: string; amountAtomic: bigint }> {
    const settlement = p.settlement as { destinationAddress: string };
    const legs = [
      { leg: 'net' as const, to: settlement.destinationAddress, amountAtomic: BigInt(p.merchantNetAtomic.toString()) },
      { leg: 'platform_fee' as const, to: custody.deriveAddress({ purpose: 'fee', index: 0 }), amountAtomic: BigInt(p.platformFeeAtomic.toString()) },
      { leg: 'partner_fee' as const, to: custody.deriveAddress({ purpose: 'fee', index: 1 }), amountAtomic: BigInt(p.partnerFeeAtomic.toString()) },
    ];
    return legs.filter((l) => l.amountAtomic > 0n);
  }

  return {
    async persistPaymentTransition(paymentId: string, t: PersistedTransition): Promise<void> {
      await prisma.$transaction((tx) => persistTransition(tx, paymentId, t));
    },

    async recordPaymentResolution(input: { paymentId: string; id: string; action: string; txHash?: string; reason?: string; actor: string }): Promise<void> {
      await prisma.paymentResolution.createMany({
        data: [{ id: input.id, paymentId: input.paymentId, action: input.action, txHash: input.txHash ?? null, reason: input.reason ?? null, actor: input.actor }],
        skipDuplicates: true,
      });
    },

    /** Re-reads each pending transfer at the confirmation depth; one that left the canonical chain is dropped. */
    async verifyPaymentTransfers(input: {
      chainId: number;
      token: string;
      to: string;
      confirmations: number;
      transfers: string[];
    }): Promise<Array<{ key: string; outcome: 'confirmed' | 'dropped' | 'pending' }>> {
      const chain = chains.get(input.chainId);
      const results: Array<{ key: string; outcome: 'confirmed' | 'dropped' | 'pending' }> = [];
      for (const key of input.transfers) {
        const k = parseKey(key);
        const v = await chain.verifyTransfer({
          txHash: k.txHash as Hash,
          logIndex: k.logIndex,
          token: input.token as Address,
          to: input.to as Address,
          confirmations: input.confirmations,
        });
        results.push({ key, outcome: v.status === 'confirmed' ? 'confirmed' : v.status === 'pending' ? 'pending' : 'dropped' });
      }
      return results;
    },

    /**
     * Sends the net amount to the recipient's destination and the fees to the fee wallets, from the
     * Payment's escrow address. Each leg is signed once, recorded before it is broadcast, and
     * re-broadcast byte for byte on retry, so a retry can never pay twice (same nonce, same tx).
     */
    async broadcastSettlement(input: { paymentId: string }): Promise<{ txHash: string }> {
      const p = await loadPayment(input.paymentId);
      if (!p.escrowAddress) throw new Error(`payment ${p.id} has no escrow address`);
      const chain = chains.get(p.chainId);
      const escrow = custody.signer({ purpose: 'escrow', index: p.escrowIndex });
      const treasury = custody.signer({ purpose: 'treasury', index: 0 });
      const balance = await chain.getNativeBalance(escrow.address);
      if (balance < deps.treasury.minGasWei) {
        const topUp = await chain.sendNative({ from: treasury, to: escrow.address, amountWei: deps.treasury.topUpWei });
        await waitUntilMined(chain, topUp);
      }
      const recorded = (p.settlementLegs as unknown as SettlementLeg[]) ?? [];
      const legs: SettlementLeg[] = [];
      for (const plan of plannedLegs(p)) {
        const existing = recorded.find((l) => l.leg === plan.leg && l.status !== 'reverted');
        if (existing) {
          await chain.broadcast(existing.serialized as Hex);
          legs.push(existing);
          continue;
        }
        const nonce = await chain.getNonce(escrow.address, 'pending');
        const signed = await chain.signTokenTransfer({
          from: escrow,
          token: p.tokenAddress as Address,
          to: plan.to as Address,
          amountAtomic: plan.amountAtomic,
          nonce,
        });
        const leg: SettlementLeg = {
          leg: plan.leg,
          to: plan.to,
          amountAtomic: plan.amountAtomic.toString(),
          nonce: signed.nonce,
          txHash: signed.txHash,
          serialized: signed.serialized,
          status: 'broadcast',
        };
        const kept = recorded.filter((l) => l.leg !== plan.leg || l.status === 'reverted');
        await prisma.payment.update({
          where: { id: p.id },
          data: { settlementLegs: [...kept, ...legs, leg] as unknown as Prisma.InputJsonValue },
        });
        await chain.broadcast(signed);
        legs.push(leg);
      }
      const net = legs.find((l) => l.leg === 'net');
      if (!net) throw new Error(`payment ${p.id} has no net settlement leg`);
      return { txHash: net.txHash };
    },

    /** confirmed when every leg is confirmed; reverted as soon as one reverted (that leg is marked). */
    async checkSettlement(input: { paymentId: string; confirmations: number }): Promise<'confirmed' | 'pending' | 'reverted'> {
      const p = await loadPayment(input.paymentId);
      const chain = chains.get(p.chainId);
      const legs = (p.settlementLegs as unknown as SettlementLeg[]).filter((l) => l.status !== 'reverted');
      const outcome = await checkSettlementLegs(chain, legs, input.confirmations);
      const reverted = (p.settlementLegs as unknown as SettlementLeg[]).filter((l) => l.status === 'reverted');
      await prisma.payment.update({
        where: { id: p.id },
        data: { settlementLegs: [...reverted, ...legs] as unknown as Prisma.InputJsonValue },
      });
      return outcome;
    },
  };
}

export type PaymentActivities = ReturnType<typeof createPaymentActivities>;
