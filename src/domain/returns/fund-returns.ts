import { finalitiesOf, type FinalityDeps } from '../chain/finality';
import { NO_FINALITY, type TFinality } from '../chain/finality.schemas';
import type { Address } from 'viem';
import { Prisma, type PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { AddressBook } from '../../custody';
import type { AuthenticatedApp } from '../apps/apps';
import { formatAtomic, toAtomic } from '../amounts/amounts';
import { DESTINATION_REFUSAL_MESSAGES, destinationRefusal } from '../chain/custody-addresses';
import type { FundReturnEngine } from '../engine/pure/engine';
import { ApiError, notFound } from '../requests/errors';
import { assertSameRequest, type IdempotentRequest } from '../requests/idempotency-records';
import { writeEvents } from '../event-log/events';
import { paymentEventIds, paymentSubject } from '../payments/payment-origin';
import { newId } from '../values/ids';
import { lockVault, reservedByToken, spentInPeriod } from '../vaults/vaults';
import { periodStartOf, reserveKey } from '../vaults/vault-config';
import { policyTokens } from '../vaults/vault-view';
import { returnsVaultFunding } from '../vaults/vault-returns';
import { payerShares } from '../payments/payer-shares';
import {
  decideRecovery,
  decideRefund,
  refundSummaryOf,
  type RecoveryRefusal,
  type RefundFacts,
  type RefundRefusal,
} from './fund-return-rules';
import type { TCreateRecovery, TCreateRefund, TFundReturn, TIncidentList } from './fund-return.schemas';

type Payment = Awaited<ReturnType<PrismaClient['payment']['findUniqueOrThrow']>>;
export type FundReturnRow = Awaited<ReturnType<PrismaClient['fundReturn']['findUniqueOrThrow']>>;
type VaultRow = Awaited<ReturnType<PrismaClient['vault']['findUniqueOrThrow']>>;

export interface FundReturnDeps {
  prisma: PrismaClient;
  custody: AddressBook;
  chains: Pick<ChainRegistry, 'get' | 'network'>;
  engine: Pick<FundReturnEngine, 'startFundReturn'>;
}

/**
 * Who asked: a partner (its app, and the Idempotency-Key its request runs under) or an operator (CLI,
 * admin API), with the actor recorded.
 */
export type ReturnRequester = { by: 'partner'; app: AuthenticatedApp; request?: IdempotentRequest } | { by: 'operator'; actor: string };

// A Payment's return requests queue on its row lock; the default 5 s would fail the back of a burst.
const LOCKED_TX = { maxWait: 20_000, timeout: 30_000 };

/** `held`: the asset a foreign incident was posted in, for its recovery (else the Payment's). */
export function toFundReturnView(
  r: FundReturnRow,
  p: Pick<Payment, 'assetCode' | 'decimals'>,
  held?: { assetCode: string; decimals: number },
  finality: TFinality = NO_FINALITY,
): TFundReturn {
  const asset = held ?? p;
  const atomic = BigInt(r.amountAtomic.toFixed());
  return {
    id: r.id,
    object: r.kind as TFundReturn['object'],
    paymentId: r.paymentId,
    incidentId: r.incidentId,
    status: r.status as TFundReturn['status'],
    statusVersion: r.statusVersion,
    amount: {
      amount: formatAtomic(atomic, asset.decimals),
      amountAtomic: atomic.toString(),
      assetCode: asset.assetCode,
      decimals: asset.decimals,
      chainId: r.chainId,
      tokenAddress: r.tokenAddress,
    },
    destinationAddress: r.toAddress,
    reason: r.reason,
    transactionHash: r.transactionHash,
    failureReason: r.failureReason,
    createdAt: r.createdAt.toISOString(),
    broadcastAt: r.broadcastAt?.toISOString() ?? null,
    confirmedAt: r.confirmedAt?.toISOString() ?? null,
    finality,
  };
}

/** Refund events carry the Payment's status and its refundSummary after the change. */
export async function writeRefundEvent(
  tx: Prisma.TransactionClient,
  p: Payment,
  refundId: string,
  step: string,
  name: 'payment.refund_pending' | 'payment.partially_refunded' | 'payment.refunded',
) {
  const refunds = await tx.fundReturn.findMany({
    where: { paymentId: p.id, kind: 'refund' },
    select: { status: true, amountAtomic: true },
  });
  const refundSummary = refundSummaryOf(
    BigInt(p.amountAtomic.toFixed()),
    refunds.map((r) => ({ status: r.status, amountAtomic: BigInt(r.amountAtomic.toFixed()) })),
  );
  await writeEvents(tx, paymentSubject(p), `${refundId}:${step}`, [
    { name, payload: { ...paymentEventIds(p), status: p.status, statusVersion: p.statusVersion, refundId, refundSummary } },
  ]);
}

/**
 * Where returned money goes: back where it came from (`payers`, as seen on chain) unless an operator
 * names another address (audited in operator_actions by the caller); a partner naming another one is
 * refused, and money paid from several addresses has no default (each gets back only its own).
 * Every destination passes the one destination rule (custody-addresses.ts), whose one exception
 * `ownMoney` answers (a vault's own late funding goes back to that vault).
 */
async function destinationFor(
  deps: Pick<FundReturnDeps, 'prisma' | 'custody'>,
  who: ReturnRequester['by'],
  given: string | undefined,
  payers: string[],
  token: string,
  ownMoney?: (to: string) => Promise<boolean>,
): Promise<string> {
  const field = 'body.destinationAddress';
  if (given === undefined && payers.length > 1) {
    const message = `The funds came from ${payers.length} addresses: name the payer to return to (each gets back at most what it paid)`;
    throw new ApiError('bad_request', message, { reasonCode: 'destination_required', payers, fields: [{ field, message }] });
  }
  const to = (given ?? payers[0])?.toLowerCase();
  if (!to) {
    const message = "The payer's address is not known: an operator can name one (admin API or CLI)";
    throw new ApiError('bad_request', message, { reasonCode: 'destination_unknown', fields: [{ field, message }] });
  }
  if (who === 'partner' && !payers.includes(to)) {
    const message = 'Funds go back to the address that sent them; another address needs an operator (admin API or CLI), who records why';
    throw new ApiError('bad_request', message, { reasonCode: 'destination_not_payer', fields: [{ field, message }] });
  }
  const refused = await destinationRefusal(deps.prisma, deps.custody, to, [token], ownMoney);
  if (refused) {
    const message = DESTINATION_REFUSAL_MESSAGES[refused];
    throw new ApiError('bad_request', message, { reasonCode: refused, fields: [{ field, message }] });
  }
  return to;
}

function refusal(reason: RefundRefusal | RecoveryRefusal | 'incident_several_payers'): ApiError {
  const messages: Record<RefundRefusal | RecoveryRefusal | 'incident_several_payers', [ErrorCodeOf, string]> = {
    payment_not_refundable: ['conflict', 'Only a succeeded receive Payment can be refunded'],
    refund_amount_invalid: ['bad_request', 'The refund amount must be greater than zero'],
    refund_exceeds_payment: ['conflict', 'The refund exceeds what is left of the Payment to refund'],
    refund_exceeds_payer: [
      'conflict',
      'The refund exceeds what is left to refund to this payer: each payer gets back at most what it paid',
    ],
    incident_several_payers: [
      'conflict',
      'These funds came from several addresses and were recorded as one incident: an operator returns them (admin API or CLI), naming where',
    ],
    vault_missing: ['conflict', 'The recipient has no vault to pay the refund from'],
    vault_policy_inactive: ['conflict', "The recipient's vault has no active policy: money leaves a vault only under one"],
    vault_token_not_allowed: ['conflict', "The recipient's vault policy does not allow this token"],
    vault_spend_limit_exceeded: ['conflict', "The refund exceeds what the recipient's vault policy allows in this period"],
    vault_insufficient_balance: ['conflict', "The recipient's vault does not hold enough available funds for this refund"],
    incident_already_recovered: ['conflict', "The incident's funds were already returned"],
    recovery_in_progress: ['conflict', "A return of the incident's funds is already under way"],
  };
  const [code, message] = messages[reason];
  return new ApiError(code, message, { reasonCode: reason });
}
type ErrorCodeOf = 'conflict' | 'bad_request';

/** The vault's policy as it bears on a refund of this Payment (read under the vault's lock). */
async function policyFacts(tx: Prisma.TransactionClient, vault: VaultRow | null, payment: Payment) {
  const policy = vault?.activePolicyId ? await tx.vaultPolicy.findUnique({ where: { id: vault.activePolicyId } }) : null;
  if (!vault || policy?.status !== 'active' || !vault.periodAnchorAt)
    return { policyActive: false, tokenAllowed: false, limitAtomic: 0n, spentInPeriodAtomic: 0n };
  const now = new Date();
  return {
    policyActive: true,
    tokenAllowed: policyTokens(policy).some(
      (t) => t.chainId === payment.chainId && t.tokenAddress.toLowerCase() === payment.tokenAddress.toLowerCase(),
    ),
    limitAtomic: BigInt(policy.spendLimitAtomic.toFixed()),
    spentInPeriodAtomic: await spentInPeriod(tx, vault.id, periodStartOf(vault.periodAnchorAt, now)),
  };
}

async function startReturn(deps: Pick<FundReturnDeps, 'chains' | 'engine'>, row: FundReturnRow): Promise<void> {
  await deps.engine.startFundReturn(row.id, deps.chains.network(row.chainId).confirmations);
}

/** What a new return records of the partner's request that made it (nothing for an operator's). */
function madeUnder(request: IdempotentRequest | undefined) {
  return { idempotencyKey: request?.key ?? null, requestHash: request?.requestHash ?? null };
}

/**
 * The return an earlier try of this very request made: a 5xx after its commit (its workflow's start
 * failed) released the key, so the retry runs again and, rather than being refused by the amount it
 * holds itself, finishes what it started. Its workflow is started if it has none: the workflow id is
 * the return's, so one started by that try or by the reconciler answers 'exists' and nothing is sent
 * twice. Null when nothing was made under the key; another request under it is a conflict.
 */
async function madeEarlier(
  deps: Pick<FundReturnDeps, 'prisma' | 'chains' | 'engine'>,
  appId: string,
  request: IdempotentRequest | undefined,
): Promise<FundReturnRow | null> {
  if (!request) return null;
  const row = await deps.prisma.fundReturn.findUnique({ where: { appId_idempotencyKey: { appId, idempotencyKey: request.key } } });
  if (!row) return null;
  assertSameRequest(row.requestHash, request);
  await startReturn(deps, row);
  return row;
}

/** The refund amount asked for in the Payment's atomic units (null: the rest); more decimals than the asset has is 400. */
function requestedRefund(amount: string | undefined, decimals: number): bigint | null {
  if (amount === undefined) return null;
  try {
    return toAtomic(amount, decimals);
  } catch (err) {
    const message = (err as Error).message;
    throw new ApiError('bad_request', message, { fields: [{ field: 'body.amount', message }] });
  }
}

/** What a refund decision reads, before the lock and under it (the Payment's row lock, then the vault's). */
interface RefundReads {
  /** The Payment as read before the lock. */
  found: Payment;
  /** The Payment as read under its row lock. */
  payment: Payment;
  vault: VaultRow | null;
  /** The vault as read under its lock. */
  locked: VaultRow | null;
  to: string | null;
  shares: Array<{ address: string; amountAtomic: bigint }>;
  requested: bigint | null;
}

/**
 * The facts decideRefund weighs, read under the locks in this order: the vault's balance on chain,
 * what the Payment's refunds hold (in all, then to this payer), the vault's reserves, its policy.
 */
async function refundFacts(deps: Pick<FundReturnDeps, 'chains'>, tx: Prisma.TransactionClient, r: RefundReads): Promise<RefundFacts> {
  const { found, payment, vault, to } = r;
  const paymentId = payment.id;
  // Read under the vault's lock, which every reserve's confirmation takes: a send leaves the balance
  // before it stops being reserved, so the balance less the reserves is never counted twice.
  const balance =
    vault?.address && payment.status === 'succeeded'
      ? await deps.chains.get(payment.chainId).getTokenBalance({ token: payment.tokenAddress as Address, owner: vault.address as Address })
      : 0n;
  const held = await tx.fundReturn.aggregate({
    where: { paymentId, kind: 'refund', status: { not: 'failed' } },
    _sum: { amountAtomic: true },
  });
  const heldByPayer = to
    ? await tx.fundReturn.aggregate({
        where: { paymentId, kind: 'refund', status: { not: 'failed' }, toAddress: to },
        _sum: { amountAtomic: true },
      })
    : null;
  const reserved = vault ? ((await reservedByToken(tx, vault.id)).get(reserveKey(payment.chainId, payment.tokenAddress)) ?? 0n) : 0n;
  return {
    paymentIntent: payment.intent,
    // Succeeded is final: one read as succeeded before the lock still is (and then `to` is known).
    paymentStatus: found.status === 'succeeded' ? payment.status : found.status,
    paymentAmountAtomic: BigInt(payment.amountAtomic.toFixed()),
    heldAtomic: BigInt(held._sum.amountAtomic?.toFixed() ?? '0'),
    requestedAtomic: r.requested,
    payerShareAtomic: r.shares.find((x) => x.address === to)?.amountAtomic ?? 0n,
    payerHeldAtomic: BigInt(heldByPayer?._sum.amountAtomic?.toFixed() ?? '0'),
    hasVault: vault !== null,
    ...(await policyFacts(tx, r.locked, payment)),
    vaultAvailableAtomic: balance > reserved ? balance - reserved : 0n,
  };
}

/** The vault a Payment's refunds are paid from: its recipient's, in its app (the create and the signer both ask). */
export function recipientVaultOf(prisma: PrismaClient, payment: { recipientAccountId: string; appId: string }) {
  return prisma.vault.findFirst({ where: { accountId: payment.recipientAccountId, appId: payment.appId, address: { not: null } } });
}

/** A new pending refund from the recipient's vault to the payer, as the partner asked. */
function newRefundRow(
  app: AuthenticatedApp,
  payment: Payment,
  vault: VaultRow,
  to: string,
  amountAtomic: bigint,
  reason: string | undefined,
): Prisma.FundReturnUncheckedCreateInput {
  return {
    id: newId('refund'),
    kind: 'refund',
    appId: payment.appId,
    paymentId: payment.id,
    vaultId: vault.id,
    status: 'pending',
    statusVersion: 1,
    chainId: payment.chainId,
    tokenAddress: payment.tokenAddress.toLowerCase(),
    fromAddress: vault.address!.toLowerCase(),
    toAddress: to,
    amountAtomic: new Prisma.Decimal(amountAtomic.toString()),
    reason: reason ?? null,
    requestedBy: 'partner',
    actor: app.id,
  };
}

/**
 * Refunds part or all of a succeeded receive Payment from the recipient's vault to the payer. One
 * short transaction holds the Payment's row lock (SELECT ... FOR UPDATE) and then the vault's, so
 * concurrent refunds run one after another and each sees the others: their total never passes the
 * Payment's amount, nor their sum the vault's balance (read under the lock) less what it has promised.
 * The destination is read before it. The identical retry of a request whose try made a refund gets
 * that refund (madeEarlier). Emits payment.refund_pending; then the FundReturnWorkflow sends it.
 */
export async function createRefund(
  deps: FundReturnDeps,
  app: AuthenticatedApp,
  paymentId: string,
  input: TCreateRefund,
  request?: IdempotentRequest,
): Promise<TFundReturn> {
  const found = await deps.prisma.payment.findFirst({ where: { id: paymentId, appId: app.id } });
  if (!found) throw notFound('Payment');
  const earlier = await madeEarlier(deps, app.id, request);
  if (earlier) return toFundReturnView(earlier, found);
  const requested = requestedRefund(input.amount, found.decimals);
  const vault = await recipientVaultOf(deps.prisma, found);
  // Funding is final once the Payment succeeded: its payers' shares are read before the lock.
  const shares = found.status === 'succeeded' ? await payerShares(deps.prisma, paymentId) : [];
  const to =
    found.status === 'succeeded'
      ? await destinationFor(
          deps,
          'partner',
          input.destinationAddress,
          shares.map((x) => x.address),
          found.tokenAddress,
        )
      : null;
  const { row, payment } = await deps.prisma.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM payments WHERE id = ${paymentId} FOR UPDATE`;
    const payment = await tx.payment.findUniqueOrThrow({ where: { id: paymentId } });
    const locked = vault ? await lockVault(tx, vault.id) : null;
    const decision = decideRefund(await refundFacts(deps, tx, { found, payment, vault, locked, to, shares, requested }));
    if (!decision.ok) throw refusal(decision.reason);
    const data = { ...newRefundRow(app, payment, vault!, to!, decision.amountAtomic, input.reason), ...madeUnder(request) };
    const row = await tx.fundReturn.create({ data });
    await writeRefundEvent(tx, payment, row.id, 'pending', 'payment.refund_pending');
    return { row, payment };
  }, LOCKED_TX);
  await startReturn(deps, row);
  return toFundReturnView(row, payment);
}

/**
 * Whose money an incident holds: its payer (recorded with it: its transfer's sender, or the one payer
 * of a per-payer share). An incident from before that record: its transfer's sender, else the
 * Payment's payers (several, for a whole incident of a Payment paid from several addresses).
 */
export async function payersOf(
  db: PrismaClient,
  incident: { paymentId: string; transferId: string | null; fromAddress: string | null },
): Promise<string[]> {
  if (incident.fromAddress) return [incident.fromAddress.toLowerCase()];
  const transfer = incident.transferId ? await db.paymentTransfer.findUnique({ where: { id: incident.transferId } }) : null;
  if (transfer) return [transfer.fromAddress.toLowerCase()];
  return (await payerShares(db, incident.paymentId)).map((x) => x.address);
}

/**
 * Whether a recovery would be created now, and of what: the Payment and its incident exist, the
 * incident's payers, and the destination the rules allow (its payer by default; never the zero
 * address, a token contract or the service's own address but the vault it came from). Reads only.
 */
export async function checkRecovery(deps: FundReturnDeps, who: ReturnRequester, paymentId: string, input: TCreateRecovery) {
  const payment = await deps.prisma.payment.findFirst({ where: { id: paymentId, ...(who.by === 'partner' ? { appId: who.app.id } : {}) } });
  if (!payment?.escrowAddress) throw notFound('Payment');
  const incident = await deps.prisma.paymentIncident.findFirst({ where: { id: input.incidentId, paymentId } });
  if (!incident) throw notFound('Incident');
  const payers = await payersOf(deps.prisma, incident);
  // Recorded whole before incidents were per payer: no one payer may have it all on a partner's word.
  if (payers.length > 1 && who.by === 'partner') throw refusal('incident_several_payers');
  const ownVault = (address: string) => returnsVaultFunding(deps.prisma, { paymentId, transferId: incident.transferId, to: address });
  const to = await destinationFor(deps, who.by, input.destinationAddress, payers, payment.tokenAddress, ownVault);
  const live = await deps.prisma.fundReturn.findFirst({ where: { incidentId: incident.id, status: { not: 'failed' } } });
  const decision = decideRecovery({ incidentStatus: incident.status, liveRecovery: live });
  if (!decision.ok) throw refusal(decision.reason);
  return { payment, incident, payers, to };
}

/**
 * Returns an incident's funds from the Payment's escrow: to its payer by default (the incident
 * transfer's sender; an underpaid Payment's incidents are one per payer), else to the given address.
 * A vault's late funding goes back to that vault, the one service address a return may reach.
 * One recovery per incident at a time, under the incident's row lock (and a unique index on the live
 * one); a failed recovery may be asked for again. onCreated runs in the creating transaction (the
 * operator audit, src/domain/operators/operator-actions.ts). A partner's identical retry of a request
 * whose try made a recovery gets that recovery (madeEarlier).
 */
export async function createRecovery(
  deps: FundReturnDeps,
  who: ReturnRequester,
  paymentId: string,
  // approvalId: not on any HTTP schema; an operator's two-person approval of another destination,
  // which the signer checks again (return-destination.ts).
  input: TCreateRecovery & { approvalId?: string },
  onCreated?: (tx: Prisma.TransactionClient, row: FundReturnRow) => Promise<void>,
): Promise<TFundReturn> {
  const earlier = who.by === 'partner' ? await madeEarlier(deps, who.app.id, who.request) : null;
  if (earlier) return recoveryView(deps.prisma, earlier);
  const { payment, incident, to } = await checkRecovery(deps, who, paymentId, input);
  const row = await deps.prisma.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM payment_incidents WHERE id = ${incident.id} FOR UPDATE`;
    const current = await tx.paymentIncident.findUniqueOrThrow({ where: { id: incident.id } });
    const live = await tx.fundReturn.findFirst({ where: { incidentId: incident.id, status: { not: 'failed' } } });
    const decision = decideRecovery({ incidentStatus: current.status, liveRecovery: live });
    if (!decision.ok) throw refusal(decision.reason);
    const created = await tx.fundReturn.create({
      data: {
        id: newId('incidentRecovery'),
        kind: 'incident_recovery',
        appId: payment.appId,
        paymentId,
        incidentId: incident.id,
        status: 'pending',
        statusVersion: 1,
        // Where the held funds are: the incident's own chain and token (a foreign transfer's), else the Payment's.
        chainId: incident.chainId ?? payment.chainId,
        tokenAddress: (incident.tokenAddress ?? payment.tokenAddress).toLowerCase(),
        fromAddress: payment.escrowAddress!.toLowerCase(),
        toAddress: to,
        amountAtomic: incident.amountAtomic,
        reason: input.reason ?? null,
        requestedBy: who.by,
        actor: who.by === 'partner' ? who.app.id : who.actor,
        approvalId: who.by === 'operator' ? (input.approvalId ?? null) : null,
        ...madeUnder(who.by === 'partner' ? who.request : undefined),
      },
    });
    await tx.paymentIncident.update({ where: { id: incident.id }, data: { status: 'pending' } });
    await onCreated?.(tx, created);
    return created;
  }, LOCKED_TX);
  await startReturn(deps, row);
  return toFundReturnView(row, payment, (await foreignAssets(deps.prisma, paymentId, [incident])).get(incident.id));
}

/** A recovery as its create answers it: in the asset its incident is held in. */
async function recoveryView(prisma: PrismaClient, row: FundReturnRow): Promise<TFundReturn> {
  const payment = await prisma.payment.findUniqueOrThrow({ where: { id: row.paymentId } });
  const incident = await prisma.paymentIncident.findUniqueOrThrow({ where: { id: row.incidentId! }, select: { id: true, chainId: true } });
  return toFundReturnView(row, payment, (await foreignAssets(prisma, row.paymentId, [incident])).get(incident.id));
}

/** A Payment's refunds or recoveries, oldest first (a Payment has few). */
export async function listFundReturns(
  deps: FinalityDeps,
  appId: string,
  paymentId: string,
  kind: 'refund' | 'incident_recovery',
): Promise<{ items: TFundReturn[] }> {
  const { prisma } = deps;
  const payment = await prisma.payment.findFirst({ where: { id: paymentId, appId } });
  if (!payment) throw notFound('Payment');
  const rows = await prisma.fundReturn.findMany({ where: { paymentId, kind }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  const incidents = await prisma.paymentIncident.findMany({
    where: { paymentId, chainId: { not: null } },
    select: { id: true, chainId: true },
  });
  const held = await foreignAssets(prisma, paymentId, incidents);
  const finality = await finalitiesOf(deps, { kind: 'fund_return', ids: rows.map((r) => r.id) }, new Date());
  return { items: rows.map((r) => toFundReturnView(r, payment, r.incidentId ? held.get(r.incidentId) : undefined, finality.get(r.id))) };
}

/**
 * A Payment's incidents (funds held for recovery), so a partner can name one to recover: each with
 * its amount, status (that of its latest recovery) and the transfer it came from, if any.
 */
export async function listIncidents(prisma: PrismaClient, appId: string, paymentId: string): Promise<TIncidentList> {
  const payment = await prisma.payment.findFirst({
    where: { id: paymentId, appId },
    include: { incidents: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] } },
  });
  if (!payment) throw notFound('Payment');
  const transfers = await prisma.paymentTransfer.findMany({
    where: { id: { in: payment.incidents.flatMap((i) => (i.transferId ? [i.transferId] : [])) } },
  });
  const byId = new Map(transfers.map((t) => [t.id, t]));
  const heldIn = await foreignAssets(prisma, payment.id, payment.incidents);
  return {
    items: payment.incidents.map((i) => {
      const atomic = BigInt(i.amountAtomic.toFixed());
      const t = i.transferId ? byId.get(i.transferId) : undefined;
      const asset = heldIn.get(i.id) ?? {
        assetCode: payment.assetCode,
        decimals: payment.decimals,
        chainId: payment.chainId,
        tokenAddress: payment.tokenAddress,
      };
      return {
        id: i.id,
        kind: i.kind,
        status: i.status,
        amount: { amount: formatAtomic(atomic, asset.decimals), amountAtomic: atomic.toString(), ...asset },
        transactionHash: t?.txHash ?? null,
        fromAddress: i.fromAddress ?? t?.fromAddress ?? null,
        createdAt: i.createdAt.toISOString(),
      };
    }),
  };
}

/** The asset each foreign incident (another chain or token than its Payment's) was posted in, by incident id. */
async function foreignAssets(prisma: PrismaClient, paymentId: string, incidents: Array<{ id: string; chainId: number | null }>) {
  const foreign = incidents.filter((i) => i.chainId !== null).map((i) => `incident:${i.id}`);
  const out = new Map<string, { assetCode: string; decimals: number; chainId: number; tokenAddress: string }>();
  if (foreign.length === 0) return out;
  const entries = await prisma.ledgerEntry.findMany({
    where: { posting: { sourceType: 'payment', sourceId: paymentId, leg: { in: foreign } } },
    include: { posting: { select: { leg: true } } },
  });
  for (const e of entries)
    out.set(e.posting.leg.slice('incident:'.length), {
      assetCode: e.assetSymbol,
      decimals: e.decimals,
      chainId: e.chainId,
      tokenAddress: e.tokenAddress,
    });
  return out;
}
