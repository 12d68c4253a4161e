import { parseTransaction, type Address, type Hash, type Hex, type LocalAccount } from 'viem';
import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import { FeeAboveCapError, NonceAlreadyUsedError, type Chain, type SignedTransaction } from '../../chain/types';
import { replacementFees, type Fees } from '../../chain/fees';
import { gasSettings } from '../../config/gas';
import type { Logger } from '../../logger';
import { raiseAlert, resolveAlerts } from '../monitoring/alerts';
import type { Custody, KeyPath } from '../../custody';
import type { SettlementRefusalReason } from './pure/hold-reasons';
import { destinationRefusal } from '../chain/custody-addresses';
import { isVaultFundingReturn } from '../vaults/vault-returns';
import { isMoneyMissingAt } from '../ledger/reconcile';
import { crashPoint, SETTLEMENT_CRASH_POINTS } from '../../platform/crash-points';
import { withLease, type LeaseOptions } from './lease-lock';
import { topUpBatcher, type TopUp, type TopUpBatcher } from './gas-top-ups';
import { payerNeedWei, topUpWei, type GasCost } from '../../chain/gas-cover';
import {
  followLegFamily,
  isLive,
  loadLegs,
  markLeg,
  recordLeg,
  recordReplacement,
  type LegKind,
  type SettlementLeg,
  type SettlementSource,
} from './settlement-legs';

export interface SettlementSenderDeps {
  prisma: PrismaClient;
  chains: ChainRegistry;
  custody: Custody;
  /** Where an operator alert (an empty gas treasury) and a failed fee replacement are logged. */
  logger?: Pick<Logger, 'error' | 'warn' | 'info'>;
  /** How long a gas top-up may take to be mined before the attempt fails (a block time or two). */
  topUpTimeoutMs?: number;
}

export interface PlannedLeg {
  leg: LegKind;
  to: string;
  amountAtomic: bigint;
}

/** What to pay out, from which address the service controls. */
export interface SettlementOrder {
  source: SettlementSource;
  chainId: number;
  token: string;
  payer: KeyPath;
  legs: PlannedLeg[];
  /**
   * Delivering again a settlement that was posted and then taken off the chain by a reorg (see
   * docs/decisions/ledger-and-money-on-chain.md, "A settlement a deep reorg dropped is sent again"): nothing is sent unless the
   * payer holds every leg still to send, and a leg whose nonce another transaction took is signed
   * again only once that transaction is final.
   */
  redelivery?: boolean;
  /**
   * The source's own check, after the destination rule and before the payer's lease or any signature
   * (a fund return's payer-or-approval check): it throws to stop the send.
   */
  authorize?: () => Promise<void>;
}

/** Nothing can be sent: retrying can't help. The workflow holds the resource for an operator. */
export class SettlementRefusedError extends Error {
  constructor(
    readonly reason: SettlementRefusalReason,
    message: string,
  ) {
    super(message);
    this.name = 'SettlementRefusedError';
  }
}

/** Why a redelivery stops short, to be tried again by a later pass. */
export type RedeliveryHoldReason = 'funds_missing' | 'waiting_for_finality';

/**
 * A redelivery that must not send (yet): the payer does not hold what is left to send, or a leg's
 * nonce went to a transaction that is not final, so the original could still be mined.
 */
export class SettlementHeldError extends Error {
  constructor(
    readonly reason: RedeliveryHoldReason,
    message: string,
  ) {
    super(message);
    this.name = 'SettlementHeldError';
  }
}

/** The legs with an amount to send; a settlement without a net leg is refused. */
function legsToSend(order: SettlementOrder): { planned: PlannedLeg[]; net: PlannedLeg } {
  const planned = order.legs.filter((l) => l.amountAtomic > 0n);
  if (!planned.some((l) => l.leg === 'net')) {
    throw new SettlementRefusedError(
      'settlement_destination_missing',
      `${order.source.type} ${order.source.id} has no net amount to settle`,
    );
  }
  return { planned, net: planned.find((l) => l.leg === 'net')! };
}

/**
 * Checked again here, not only at registration: a destination accepted before the rule existed, or
 * one that became ours since, would otherwise be paid the service's own money (and credited again).
 */
async function assertDestinationAllowed(deps: SettlementSenderDeps, order: SettlementOrder, net: PlannedLeg): Promise<void> {
  if (order.source.type === 'vault_funding') {
    // A vault pays only into a Payment's escrow, an address of the service by definition.
    const escrow = await deps.prisma.custodyAddress.findUnique({ where: { address: net.to.toLowerCase() } });
    if (escrow?.purpose !== 'escrow') {
      throw new SettlementRefusedError(
        'settlement_destination_not_allowed',
        `vault_funding ${order.source.id}: ${net.to} is not a Payment escrow`,
      );
    }
    return;
  }
  const ownMoney = (to: string) => isVaultFundingReturn(deps.prisma, order.source, to);
  const refused = await destinationRefusal(deps.prisma, deps.custody, net.to, [order.token], ownMoney);
  if (refused)
    throw new SettlementRefusedError(
      'settlement_destination_not_allowed',
      `${order.source.type} ${order.source.id}: ${net.to} is not allowed (${refused})`,
    );
}

/** Legs already signed are followed through; only new money waits for the books to be right. */
async function assertBooksRight(
  deps: SettlementSenderDeps,
  order: SettlementOrder,
  payer: Address,
  planned: PlannedLeg[],
  legs: SettlementLeg[],
): Promise<void> {
  const signsNew = planned.some((p) => !legs.some((l) => l.leg === p.leg && isLive(l)));
  if (signsNew && (await isMoneyMissingAt(deps.prisma, { chainId: order.chainId, token: order.token, address: payer }))) {
    throw new SettlementRefusedError(
      'ledger_difference',
      `${order.source.type} ${order.source.id}: money is missing at ${payer} (open ledger_difference alert)`,
    );
  }
}

/**
 * A recorded leg followed through: 'sent' when it is mined or on its way, 'held' when its nonce went
 * to a transaction not final yet, 'replaced' once it is marked so (it can never be mined).
 */
async function followLiveLeg(
  deps: SettlementSenderDeps,
  chain: Chain,
  payer: LocalAccount,
  legs: SettlementLeg[],
  live: SettlementLeg,
  untilFinal: boolean,
): Promise<{ kind: 'sent' } | { kind: 'held'; leg: SettlementLeg } | { kind: 'replaced' }> {
  const current = await currentTransaction(deps, chain, payer, legs, live);
  if (current === 'mined') return { kind: 'sent' };
  const sent = await rebroadcast(chain, current, { untilFinal });
  if (sent === 'sent') return { kind: 'sent' };
  if (sent === 'held') return { kind: 'held', leg: current };
  await markLeg(deps.prisma, current, 'replaced');
  return { kind: 'replaced' };
}

/**
 * One top-up for every leg this send will sign, before the first is signed: topped up leg by leg, the
 * second top-up would wait for a block behind the first leg, on a real chain a block time per leg.
 * Each leg's own cover then finds the gas there.
 */
async function coverNewLegs(
  deps: SettlementSenderDeps,
  chain: Chain,
  payer: LocalAccount,
  order: SettlementOrder,
  planned: PlannedLeg[],
  legs: SettlementLeg[],
): Promise<void> {
  const toSign = planned.filter((p) => !legs.some((l) => l.leg === p.leg && isLive(l)));
  if (toSign.length === 0) return;
  const costs = await Promise.all(
    toSign.map((p) =>
      chain.tokenTransferCost({ from: payer, token: order.token as Address, to: p.to as Address, amountAtomic: p.amountAtomic }),
    ),
  );
  await coverPayer(deps, chain, payer.address, costs);
}

/** Signs a planned leg at the payer's pending nonce and commits it (status broadcast) before anyone broadcasts it. */
async function signAndRecordLeg(
  deps: SettlementSenderDeps,
  chain: Chain,
  payer: LocalAccount,
  order: SettlementOrder,
  plan: PlannedLeg,
  legs: SettlementLeg[],
): Promise<SignedTransaction> {
  const nonce = await nextNonce(deps, chain, payer.address, order.source);
  const signed = await chain.signTokenTransfer({
    from: payer,
    token: order.token as Address,
    to: plan.to as Address,
    amountAtomic: plan.amountAtomic,
    nonce,
    cover: (tx) => coverPayer(deps, chain, payer.address, [tx], nonce),
  });
  legs.push(
    await recordLeg(deps.prisma, {
      source: order.source,
      leg: plan.leg,
      chainId: order.chainId,
      from: payer.address,
      to: plan.to,
      token: order.token,
      amountAtomic: plan.amountAtomic,
      nonce: signed.nonce,
      txHash: signed.txHash,
      serialized: signed.serialized,
      status: 'broadcast',
    }),
  );
  return signed;
}

/**
 * The nonce of a new leg: the node's pending nonce, but never that of an earlier leg of the same
 * settlement the chain has not passed. A node forgets a transaction it dropped (anvil evicts one a fee
 * spike left underpriced; a restarted node forgets its pool): a fee leg signed at the net leg's nonce
 * took it, and the merchant's net could never be mined. Past it, the new leg waits in the pool until
 * the dropped one is sent again (each check sends a dropped leg again). Another settlement's leg is not
 * waited for: one recorded and never sent (a crash) loses its nonce and is signed again by its own send.
 */
async function nextNonce(deps: SettlementSenderDeps, chain: Chain, payer: Address, source: SettlementSource): Promise<number> {
  const [pending, mined] = await Promise.all([chain.getNonce(payer, 'pending'), chain.getNonce(payer, 'latest')]);
  const recorded = await deps.prisma.settlementLeg.aggregate({
    where: {
      sourceType: source.type,
      sourceId: source.id,
      chainId: chain.chainId,
      fromAddress: payer.toLowerCase(),
      status: 'broadcast',
      nonce: { gte: mined },
    },
    _max: { nonce: true },
  });
  const afterRecorded = recorded._max.nonce === null ? 0 : recorded._max.nonce + 1;
  return Math.max(pending, afterRecorded);
}

/** Legs whose nonce went to a transaction not final yet hold the redelivery, after the other legs went. */
function assertNoneHeld(order: SettlementOrder, held: SettlementLeg[]): void {
  if (held.length === 0) return;
  const which = held.map((l) => `${l.leg} (nonce ${l.nonce})`).join(', ');
  throw new SettlementHeldError(
    'waiting_for_finality',
    `${order.source.type} ${order.source.id}: the nonce of ${which} went to a transaction that is not final yet`,
  );
}

/**
 * The one way money leaves an address the service controls (Payment escrow, deposit addresses, and
 * every later sender). Rules, in docs/decisions/ledger-and-money-on-chain.md ("Settlement sender"):
 * - each leg is signed once, recorded (committed) before it is broadcast, and on a retry re-broadcast
 *   byte for byte, so a retry can never pay twice;
 * - one sender at a time per payer address and per treasury (a lease, not a held connection), so no
 *   two transactions share a nonce;
 * - before a leg is signed or sent again, its payer is made to hold what it and the payer's other
 *   pending legs may cost at the network's fee cap, topped up from the treasury (mined first);
 * - a recorded leg whose nonce another transaction took, and that was never mined, can never be mined:
 *   it is marked replaced and signed again (a redelivery waits until that transaction is final).
 * Answers the net leg's transaction hash.
 */
export async function sendSettlement(deps: SettlementSenderDeps, order: SettlementOrder): Promise<{ txHash: string }> {
  const { planned, net } = legsToSend(order);
  await assertDestinationAllowed(deps, order, net);
  await order.authorize?.();
  const chain = deps.chains.get(order.chainId);
  const payer = deps.custody.signer(order.payer);
  return withLease(deps.prisma, senderKey(order.chainId, payer.address), async (lease) => {
    const legs = await loadLegs(deps.prisma, order.source);
    await assertBooksRight(deps, order, payer.address, planned, legs);
    if (order.redelivery) await requireFunds(chain, order, payer.address, planned, legs);
    await coverNewLegs(deps, chain, payer, order, planned, legs);
    const held: SettlementLeg[] = [];
    for (const plan of planned) {
      const live = legs.find((l) => l.leg === plan.leg && isLive(l));
      if (live?.status === 'confirmed') continue;
      if (live) {
        if (live.serialized) await coverPayer(deps, chain, payer.address, [gasCostOf(live.serialized as Hex)], live.nonce);
        const followed = await followLiveLeg(deps, chain, payer, legs, live, order.redelivery === true);
        if (followed.kind === 'sent') continue;
        if (followed.kind === 'held') {
          // The other legs still go: their nonces are not the taken one.
          held.push(followed.leg);
          continue;
        }
      }
      await lease.renew();
      const signed = await signAndRecordLeg(deps, chain, payer, order, plan, legs);
      crashPoint(SETTLEMENT_CRASH_POINTS.legRecorded);
      await chain.broadcast(signed);
      crashPoint(SETTLEMENT_CRASH_POINTS.legBroadcast);
    }
    assertNoneHeld(order, held);
    const sentNet = legs.find((l) => l.leg === 'net' && isLive(l));
    if (!sentNet) throw new Error(`${order.source.type} ${order.source.id}: net leg missing after sending`);
    return { txHash: sentNet.txHash };
  });
}

/** What a payer needs to re-send its stuck legs: the payer and the settlement (no new leg is signed). */
export interface StuckLegsOrder {
  source: SettlementSource;
  chainId: number;
  payer: KeyPath;
}

/**
 * replaceStuckLegs for a confirmation check: a replacement that fails (a chain read, an empty gas
 * treasury, which alerts) is logged and tried again at the next check; the legs are read all the same.
 */
export async function replaceStuckLegsBeforeCheck(deps: SettlementSenderDeps, order: () => Promise<StuckLegsOrder>): Promise<void> {
  try {
    const stuck = await order();
    // Most checks find nothing underpriced: they never wait on the payer's lease (a send or a dead
    // holder's lease can hold it a minute), and one that does waits briefly; the next check tries again.
    if (!(await anyLegStuck(deps, stuck))) return;
    const { capped } = await replaceStuckLegs(deps, stuck, { waitMs: CHECK_LEASE_WAIT_MS });
    if (capped.length > 0) deps.logger?.warn({ capped }, 'settlement legs stuck under a base fee above the network cap: waiting');
  } catch (err) {
    deps.logger?.warn({ err }, 'replacing a stuck settlement leg failed; the next check tries again');
  }
}

/**
 * Follows a settlement's broadcast legs while they confirm: one stuck under a rising base fee is
 * replaced at its nonce with higher fees (within the network's cap), recorded before it is broadcast.
 * Answers the legs a replacement would take above the cap (they stay as they are, and wait).
 */
export async function replaceStuckLegs(
  deps: SettlementSenderDeps,
  order: StuckLegsOrder,
  lease: LeaseOptions = {},
): Promise<{ capped: string[] }> {
  const chain = deps.chains.get(order.chainId);
  const payer = deps.custody.signer(order.payer);
  const capped: string[] = [];
  await withLease(
    deps.prisma,
    senderKey(order.chainId, payer.address),
    async () => {
      const legs = await loadLegs(deps.prisma, order.source);
      for (const live of legs.filter((l) => l.status === 'broadcast')) {
        const onCapped = () => void (capped.includes(live.leg) || capped.push(live.leg));
        const current = await currentTransaction(deps, chain, payer, legs, live, onCapped);
        if (current !== 'mined' && (current !== live || (await isDropped(chain, current)))) await resend(chain, current, onCapped);
      }
    },
    lease,
  );
  return { capped };
}

/** A recorded leg the node no longer holds and the chain has not mined (a fee spike evicted it, the node restarted). */
async function isDropped(chain: Chain, leg: SettlementLeg): Promise<boolean> {
  return leg.serialized !== '' && (await chain.getTransactionStatus(leg.txHash as Hash, 1)) === 'not_found';
}

/** Broadcasts a replacement, or a dropped leg again; one the node refuses under the base fee waits in the books. */
async function resend(chain: Chain, leg: SettlementLeg, onCapped: () => void): Promise<void> {
  try {
    await chain.broadcast(leg.serialized as Hex);
  } catch (err) {
    if (!(err instanceof FeeAboveCapError)) throw err;
    onCapped();
  }
}

/** How long a confirmation check waits for the payer's lease before leaving a replacement to the next check. */
const CHECK_LEASE_WAIT_MS = 2_000;

/**
 * Whether a broadcast leg is stuck (read without the lease): not mined, and either offering less than
 * the base fee now asks or unknown to the node (dropped from its pool).
 */
async function anyLegStuck(deps: SettlementSenderDeps, order: StuckLegsOrder): Promise<boolean> {
  const chain = deps.chains.get(order.chainId);
  const broadcast = (await loadLegs(deps.prisma, order.source)).filter((l) => l.status === 'broadcast' && l.serialized);
  if (broadcast.length === 0) return false;
  const baseFee = await chain.getBaseFee();
  for (const leg of broadcast) {
    const status = await chain.getTransactionStatus(leg.txHash as Hash, 1);
    if (status === 'not_found') return true;
    if (status === 'pending' && replacementFees(feesOf(leg.serialized as Hex), baseFee, chain.feePolicy).kind !== 'keep') return true;
  }
  return false;
}

/**
 * A live, unconfirmed leg as it should be sent now: 'mined' when the chain holds one of its
 * transactions at this nonce (made the live one); else the live transaction, replaced first when the
 * base fee rose past what it offers. The replacement is committed before the caller broadcasts it.
 */
async function currentTransaction(
  deps: SettlementSenderDeps,
  chain: Chain,
  payer: LocalAccount,
  legs: SettlementLeg[],
  live: SettlementLeg,
  onCapped: () => void = () => undefined,
): Promise<SettlementLeg | 'mined'> {
  const leg = await followLegFamily(deps, legs, live);
  // An operator's hand-made payout has no bytes of ours to sign again.
  if (!leg.serialized) return leg;
  if ((await chain.getTransactionInclusion(leg.txHash as Hash)) !== null) return 'mined';
  const decision = replacementFees(feesOf(leg.serialized as Hex), await chain.getBaseFee(), chain.feePolicy);
  if (decision.kind === 'capped') onCapped();
  if (decision.kind !== 'replace') return leg;
  const replacement = { ...gasCostOf(leg.serialized as Hex), maxFeePerGas: decision.fees.maxFeePerGas };
  await coverPayer(deps, chain, payer.address, [replacement], leg.nonce);
  const signed = await chain.signReplacement({ from: payer, original: leg.serialized as Hex, fees: decision.fees });
  const next = await recordReplacement(deps.prisma, leg, signed);
  legs.push(next);
  crashPoint(SETTLEMENT_CRASH_POINTS.legRecorded);
  return next;
}

/** What a signed transaction may cost its sender: its gas limit, fee cap and value. */
function gasCostOf(serialized: Hex): GasCost {
  const tx = parseTransaction(serialized);
  return { gasLimit: tx.gas ?? 0n, maxFeePerGas: feesOf(serialized).maxFeePerGas, valueWei: tx.value ?? 0n };
}

/** The fees a signed transaction offers (a legacy one's gas price stands for both). */
function feesOf(serialized: Hex): Fees {
  const tx = parseTransaction(serialized);
  const maxFeePerGas = tx.maxFeePerGas ?? tx.gasPrice ?? 0n;
  return { maxFeePerGas, maxPriorityFeePerGas: tx.maxPriorityFeePerGas ?? maxFeePerGas };
}

/** The platform fee to fee wallet 0, the partner fee to fee wallet 1: every settlement alike. */
export function feeLegs(custody: Custody, platformAtomic: bigint, partnerAtomic: bigint): PlannedLeg[] {
  return [
    { leg: 'platform_fee', to: custody.deriveAddress({ purpose: 'fee', index: 0 }), amountAtomic: platformAtomic },
    { leg: 'partner_fee', to: custody.deriveAddress({ purpose: 'fee', index: 1 }), amountAtomic: partnerAtomic },
  ];
}

/** One lease per (chain, address): payers and the treasury alike. */
function senderKey(chainId: number, address: string): string {
  return `sender:${chainId}:${address.toLowerCase()}`;
}

/**
 * sent: the recorded leg is on its way (or mined). dead: another transaction took its nonce and the
 * chain does not know the leg, so it can never be mined. held (untilFinal): its nonce was taken, but
 * not in a finalized block, so a reorg could still free the nonce for it; never signed again then.
 */
async function rebroadcast(chain: Chain, leg: SettlementLeg, opts: { untilFinal: boolean }): Promise<'sent' | 'dead' | 'held'> {
  try {
    await chain.broadcast(leg.serialized as Hex);
    return 'sent';
  } catch (err) {
    if (!(err instanceof NonceAlreadyUsedError)) throw err;
    // The finalized nonce first: a leg mined at or below that block would be found by the status read.
    const finalNonce = opts.untilFinal ? await chain.getNonce(leg.from as Address, 'finalized') : null;
    if ((await chain.getTransactionStatus(leg.txHash as Hash, 1)) !== 'not_found') throw err;
    return finalNonce === null || finalNonce > leg.nonce ? 'dead' : 'held';
  }
}

/**
 * A redelivery sends only when the payer holds every leg not on the chain (recorded legs not mined,
 * and legs to sign): a leg mined without the money reverts and burns its nonce, so the payout would
 * be lost rather than late (e.g. the reorg took the payer's transfer too).
 */
async function requireFunds(
  chain: Chain,
  order: SettlementOrder,
  payer: Address,
  planned: PlannedLeg[],
  legs: SettlementLeg[],
): Promise<void> {
  let owed = 0n;
  for (const plan of planned) {
    const live = legs.find((l) => l.leg === plan.leg && isLive(l));
    if (!live) owed += plan.amountAtomic;
    else if (live.status !== 'confirmed' && (await chain.getTransactionInclusion(live.txHash as Hash)) === null) owed += live.amountAtomic;
  }
  if (owed === 0n) return;
  const balance = await chain.getTokenBalance({ token: order.token as Address, owner: payer });
  if (balance < owed) {
    throw new SettlementHeldError(
      'funds_missing',
      `${order.source.type} ${order.source.id}: ${payer} holds ${balance} of the ${owed} still to send`,
    );
  }
}

export const GAS_TREASURY_EMPTY = 'gas_treasury_empty';

/** The gas treasury can't pay a top-up: this attempt fails (the settlement retries, then holds), an operator is alerted. */
export class GasTreasuryEmptyError extends Error {
  constructor(chainId: number, treasury: string, balance: bigint, needed: bigint) {
    super(`gas treasury ${treasury} on chain ${chainId} holds ${balance} wei, short of the ${needed} a top-up needs`);
    this.name = 'GasTreasuryEmptyError';
  }
}

/**
 * Makes the payer hold what `next` may cost (each with a fee-bump replacement at the cap), beside its
 * other legs still in the mempool (recorded, broadcast, at a nonce the chain has not passed; `except`
 * one `next` stands for). Tops up from the treasury by what is missing, in the network's steps, and
 * waits for each top-up to be mined. The balance is read again after each: a top-up answered by one
 * already on its way may be smaller.
 */
async function coverPayer(deps: SettlementSenderDeps, chain: Chain, payer: Address, next: GasCost[], except?: number): Promise<void> {
  const gas = gasSettings(deps.chains.network(chain.chainId));
  const inFlight = await legsInFlight(deps, chain, payer, except);
  const need = payerNeedWei([...next, ...inFlight], chain.feePolicy.maxFeePerGasWei, gas.minBalanceWei);
  for (let round = 0; ; round++) {
    const balance = await chain.getNativeBalance(payer);
    const amount = topUpWei(balance, need, gas.topUpWei);
    if (amount === 0n) return;
    if (round === MAX_TOP_UP_ROUNDS) {
      throw new Error(`${payer} on chain ${chain.chainId} holds ${balance} wei after ${round} top-ups, short of the ${need} its legs need`);
    }
    await topUpFromTreasury(deps, chain, payer, amount);
  }
}

const MAX_TOP_UP_ROUNDS = 3;

/** The payer's other legs the node holds against its balance: broadcast, at or above its mined nonce. */
async function legsInFlight(deps: SettlementSenderDeps, chain: Chain, payer: Address, exceptNonce?: number): Promise<GasCost[]> {
  const minedNonce = await chain.getNonce(payer, 'latest');
  const rows = await deps.prisma.settlementLeg.findMany({
    where: { chainId: chain.chainId, fromAddress: payer.toLowerCase(), status: 'broadcast', nonce: { gte: minedNonce } },
    select: { nonce: true, serialized: true },
  });
  return rows.filter((r) => r.nonce !== exceptNonce && r.serialized).map((r) => gasCostOf(r.serialized as Hex));
}

/**
 * One top-up from the network's gas treasury (one treasury sender at a time, batched), mined before
 * this returns. A treasury that can't pay raises a `gas_treasury_empty` alert (resolved by the next
 * top-up it pays).
 */
async function topUpFromTreasury(deps: SettlementSenderDeps, chain: Chain, payer: Address, amountWei: bigint): Promise<void> {
  const treasury = deps.custody.signer({ purpose: 'treasury', index: 0 });
  const alerts = { prisma: deps.prisma, logger: deps.logger ?? SILENT };
  const subject = `${chain.chainId}:${treasury.address.toLowerCase()}`;
  // The top-up plus its own fee at the cap: what the treasury must hold for the top-up to be mined.
  const needed = amountWei + NATIVE_TRANSFER_GAS * chain.feePolicy.maxFeePerGasWei;
  const balance = await chain.getNativeBalance(treasury.address);
  if (balance < needed) {
    await raiseAlert(alerts, {
      kind: GAS_TREASURY_EMPTY,
      severity: 'critical',
      subject,
      details: { chainId: chain.chainId, treasury: treasury.address, balanceWei: balance.toString(), neededWei: needed.toString() },
    });
    throw new GasTreasuryEmptyError(chain.chainId, treasury.address, balance, needed);
  }
  const topUp = await treasuryTopUps(deps, chain, treasury).request(payer, amountWei);
  await waitUntilMined(chain, topUp, deps.topUpTimeoutMs ?? 30_000);
  await resolveAlerts(alerts, GAS_TREASURY_EMPTY, [subject]);
}

/** One batcher per chain client (one per process and network), so this process's top-ups share a lease. */
const topUpBatchers = new WeakMap<Chain, TopUpBatcher>();

function treasuryTopUps(deps: SettlementSenderDeps, chain: Chain, treasury: LocalAccount): TopUpBatcher {
  let batcher = topUpBatchers.get(chain);
  if (!batcher) {
    batcher = topUpBatcher((topUps) =>
      withLease(deps.prisma, senderKey(chain.chainId, treasury.address), () => sendTopUps(chain, treasury, topUps)),
    );
    topUpBatchers.set(chain, batcher);
  }
  return batcher;
}

/**
 * The treasury's top-ups at consecutive nonces, under its lease. After one fails the rest are not
 * sent (they fail, and their attempts retry): a gap in the nonces would hold every later one.
 */
async function sendTopUps(chain: Chain, treasury: LocalAccount, topUps: TopUp[]): Promise<Array<Hash | Error>> {
  let nonce = await chain.getNonce(treasury.address, 'pending');
  const sent: Array<Hash | Error> = [];
  for (const { address: to, amountWei } of topUps) {
    if (sent.some((r) => r instanceof Error)) {
      sent.push(new Error(`gas top-up of ${to} not sent: an earlier one of its batch failed`));
      continue;
    }
    try {
      sent.push(await chain.sendNative({ from: treasury, to, amountWei, nonce }));
      nonce += 1;
    } catch (err) {
      sent.push(err instanceof Error ? err : new Error(String(err)));
    }
  }
  return sent;
}

const NATIVE_TRANSFER_GAS = 21_000n;
const SILENT = { error: () => undefined, info: () => undefined };

/** A chain with interval mining takes a block time; a top-up that takes longer fails this attempt. */
async function waitUntilMined(chain: Chain, hash: Hash, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let pause = 50; ; pause = Math.min(pause * 2, 500)) {
    const status = await chain.getTransactionStatus(hash, 1);
    if (status === 'confirmed') return;
    if (status === 'reverted') throw new Error(`gas top-up ${hash} reverted`);
    if (Date.now() > deadline) throw new Error(`gas top-up ${hash} not mined within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, pause));
  }
}
