import { createHash } from 'node:crypto';
import type { Hash } from 'viem';
import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { TransactionStatus } from '../../chain/types';

/** Every resource that sends money out; each names its legs by (sourceType, sourceId, leg). */
/** vault_funding: a vault's transfer to a Payment's escrow (src/domain/vaults/vault-funding-transfer.ts). */
/** refund, incident_recovery: a return of funds to a payer (src/domain/returns/fund-return-transfer.ts). */
export type SettlementSourceType = 'payment' | 'deposit' | 'vault_funding' | 'refund' | 'incident_recovery';

export interface SettlementSource {
  type: SettlementSourceType;
  id: string;
}

export type LegKind = 'net' | 'platform_fee' | 'partner_fee';

/**
 * broadcast: signed, recorded, sent (maybe not mined yet); confirmed: at the confirmation depth;
 * reverted: mined and reverted (its nonce is spent); replaced: its nonce went to another transaction
 * before it was mined, so it never can be; superseded: signed again at the same nonce with higher fees
 * (the live transaction of its leg and nonce is the other one, but this one may be the one mined).
 */
export type LegStatus = 'broadcast' | 'confirmed' | 'reverted' | 'replaced' | 'superseded';

/** One signed outgoing transfer of a settlement, recorded before it is broadcast. */
export interface SettlementLeg {
  id: string;
  source: SettlementSource;
  leg: LegKind;
  chainId: number;
  from: string;
  to: string;
  token: string;
  amountAtomic: bigint;
  nonce: number;
  txHash: string;
  serialized: string;
  status: LegStatus;
}

export type SettlementCheck = 'confirmed' | 'pending' | 'reverted';

/** A leg that may still count: sent and not known to be dead. */
export const isLive = (leg: SettlementLeg) => leg.status === 'broadcast' || leg.status === 'confirmed';

export async function loadLegs(prisma: PrismaClient, source: SettlementSource): Promise<SettlementLeg[]> {
  const rows = await prisma.settlementLeg.findMany({
    where: { sourceType: source.type, sourceId: source.id },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return rows.map((r) => ({
    id: r.id,
    source,
    leg: r.leg as LegKind,
    chainId: r.chainId,
    from: r.fromAddress,
    to: r.toAddress,
    token: r.tokenAddress,
    amountAtomic: BigInt(r.amountAtomic.toFixed()),
    nonce: r.nonce,
    txHash: r.txHash,
    serialized: r.serialized,
    status: r.status as LegStatus,
  }));
}

/** The id is derived from the signed transaction, so recording it twice records it once. */
export function legId(txHash: string): string {
  return `leg_${createHash('sha256').update(txHash.toLowerCase()).digest('hex').slice(0, 32)}`;
}

/** Committed before the transaction is broadcast: a retry then re-sends these bytes instead of signing again. */
export async function recordLeg(prisma: PrismaClient, leg: Omit<SettlementLeg, 'id'>): Promise<SettlementLeg> {
  const id = legId(leg.txHash);
  await prisma.settlementLeg.createMany({ data: [rowOf({ ...leg, id })], skipDuplicates: true });
  return { ...leg, id };
}

function rowOf(leg: SettlementLeg) {
  return {
    id: leg.id,
    sourceType: leg.source.type,
    sourceId: leg.source.id,
    leg: leg.leg,
    chainId: leg.chainId,
    fromAddress: leg.from.toLowerCase(),
    toAddress: leg.to.toLowerCase(),
    tokenAddress: leg.token.toLowerCase(),
    amountAtomic: leg.amountAtomic.toString(),
    nonce: leg.nonce,
    txHash: leg.txHash.toLowerCase(),
    serialized: leg.serialized,
    status: leg.status,
  };
}

/**
 * A fee replacement of a live leg (same nonce): committed with the leg it supersedes before it is
 * broadcast, so a crash can't lose either; one transaction per (leg, nonce) is live at a time.
 */
export async function recordReplacement(
  prisma: PrismaClient,
  live: SettlementLeg,
  signed: { txHash: string; serialized: string },
): Promise<SettlementLeg> {
  const next: SettlementLeg = {
    ...live,
    id: legId(signed.txHash),
    txHash: signed.txHash.toLowerCase(),
    serialized: signed.serialized,
    status: 'broadcast',
  };
  // In this order: one leg of each kind is live at a time (settlement_legs_live_key).
  await prisma.$transaction([
    prisma.settlementLeg.update({ where: { id: live.id }, data: { status: 'superseded' } }),
    prisma.settlementLeg.create({ data: rowOf(next) }),
  ]);
  live.status = 'superseded';
  return next;
}

/**
 * The transactions of one leg at one nonce (the live one and those it superseded): at most one can be
 * mined. The live one is the one the chain holds, else the newest (the highest fees); answers it,
 * having swapped the statuses when another one was live. Reads the chain only when there are others.
 */
export async function followLegFamily(
  deps: { prisma: PrismaClient; chains: Pick<ChainRegistry, 'get'> },
  all: SettlementLeg[],
  live: SettlementLeg,
): Promise<SettlementLeg> {
  const family = all.filter(
    (l) => l.leg === live.leg && l.nonce === live.nonce && l.from === live.from && (l === live || l.status === 'superseded'),
  );
  if (family.length < 2) return live;
  const chain = deps.chains.get(live.chainId);
  let chosen = family[family.length - 1]!;
  for (const member of family) {
    if ((await chain.getTransactionInclusion(member.txHash as Hash)) !== null) chosen = member;
  }
  if (chosen.id === live.id) return live;
  await deps.prisma.$transaction([
    deps.prisma.settlementLeg.update({ where: { id: live.id }, data: { status: 'superseded' } }),
    deps.prisma.settlementLeg.update({ where: { id: chosen.id }, data: { status: live.status } }),
  ]);
  chosen.status = live.status;
  live.status = 'superseded';
  return chosen;
}

export async function markLeg(prisma: PrismaClient, leg: SettlementLeg, status: LegStatus): Promise<void> {
  await prisma.settlementLeg.update({ where: { id: leg.id }, data: { status } });
  leg.status = status;
}

/** The net leg's live transaction (the one mined, after a fee replacement), or null when there is none. */
export async function liveNetTxHash(prisma: PrismaClient, source: SettlementSource): Promise<string | null> {
  const net = await prisma.settlementLeg.findFirst({
    where: { sourceType: source.type, sourceId: source.id, leg: 'net', status: { in: ['broadcast', 'confirmed'] } },
  });
  return net?.txHash ?? null;
}

/** A live leg as the chain has it now, at the confirmation depth (`not_found`: not mined, and the node does not know it). */
export interface LegOnChain {
  leg: SettlementLeg;
  chain: TransactionStatus;
}

/**
 * Re-reads each live leg at the confirmation depth and records what it finds: confirmed, reverted, or
 * (mined shallower, waiting, or gone) broadcast. Confirmed legs are read again too: until the whole
 * settlement is deep enough, and after it for a reorg deeper than the depth, a reorg can undo one.
 */
export async function recheckLegs(
  deps: { prisma: PrismaClient; chains: Pick<ChainRegistry, 'get'> },
  source: SettlementSource,
  confirmations: number,
): Promise<LegOnChain[]> {
  const read: LegOnChain[] = [];
  const all = await loadLegs(deps.prisma, source);
  for (const live of all.filter(isLive)) {
    // A fee replacement's family: whichever of its transactions the chain mined is the leg.
    const leg = await followLegFamily(deps, all, live);
    const chain = await deps.chains.get(leg.chainId).getTransactionStatus(leg.txHash as Hash, confirmations);
    if (chain === 'reverted') await markLeg(deps.prisma, leg, 'reverted');
    else if (chain === 'confirmed' && leg.status !== 'confirmed') await markLeg(deps.prisma, leg, 'confirmed');
    else if (chain !== 'confirmed' && leg.status === 'confirmed') await markLeg(deps.prisma, leg, 'broadcast');
    read.push({ leg, chain });
  }
  return read;
}

/** The settlement is confirmed when every live leg is, reverted as soon as one is (see recheckLegs). */
export async function checkSettlement(
  deps: { prisma: PrismaClient; chains: Pick<ChainRegistry, 'get'> },
  source: SettlementSource,
  confirmations: number,
): Promise<SettlementCheck> {
  const read = await recheckLegs(deps, source, confirmations);
  if (read.some((r) => r.chain === 'reverted')) return 'reverted';
  return read.every((r) => r.chain === 'confirmed') ? 'confirmed' : 'pending';
}
