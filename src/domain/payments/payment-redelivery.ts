import type { Logger } from '../../logger';
import { raiseAlert, resolveAlerts, type AlertDeps } from '../monitoring/alerts';
import { isLive, loadLegs, recheckLegs, type SettlementSource } from '../settlement/settlement-legs';
import { SettlementHeldError, SettlementRefusedError, type SettlementSenderDeps } from '../settlement/settlement-sender';
import { sendPaymentSettlement } from './payment-settlement';

/**
 * A Payment's settlement that a reorg deeper than the confirmation depth took off the chain after it
 * was posted (the Payment succeeded, or a bank Payment's provider was funded) is delivered again. The
 * Payment's workflow has moved on (usually ended), so the payment reconciliation pass follows every
 * recently posted settlement: each pass re-reads the live legs of up to `limit` Payments at the
 * confirmation depth, the longest unread first (and those with an open alert always).
 *
 * - Every leg at depth: nothing to do (an open alert is resolved).
 * - A leg gone from the chain: the same signed transactions are broadcast again through the one
 *   sender (same nonce, same hash: they can be mined once). The sender sends nothing unless the
 *   escrow holds what is still to send, and signs a leg again with a new nonce only when another
 *   transaction took its nonce in a finalized block (then the original can never be mined);
 *   otherwise the settlement is held and a later pass looks again.
 * - A leg mined and reverted, or an operator's hand-made payout gone (no bytes of ours to send): held
 *   for an operator.
 * Nothing is posted again (the settlement posting stands: the same amounts reach the same
 * addresses), and the Payment does not change: the partner was told it succeeded, and it did, once.
 * Each such settlement has one critical `settlement_dropped` alert until it is at depth again.
 */
export interface RedeliveryDeps {
  settlement: SettlementSenderDeps;
  logger: Pick<Logger, 'error' | 'warn' | 'info'>;
  /** The confirmation depth of a network. */
  confirmations(chainId: number): number;
}

export const SETTLEMENT_DROPPED = 'settlement_dropped';

/** How long after its settlement a Payment's legs are re-read: well past any chain's finality. */
export const REDELIVERY_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * A pass takes no further Payment after this long (its activity has a minute; a send may wait for a
 * gas top-up to be mined): what is left is the next pass's, the longest unread first.
 */
export const REDELIVERY_BUDGET_MS = 40_000;

/** Per Payment: at depth, sent again, mined but not deep yet, held (waiting, or for an operator), or failed (read again next pass). */
export type RedeliveryOutcome = 'confirmed' | 'resent' | 'pending' | 'held' | 'failed';

/** Counts, and the Payments sent again or held by this pass (at most `limit` of each: one pass's batch). */
export interface RedeliverySummary {
  checked: number;
  confirmed: number;
  pending: number;
  failed: number;
  resent: string[];
  held: string[];
}

/** What an open alert says the settlement is doing. */
type AlertState =
  'resent' | 'confirming' | 'waiting_for_finality' | 'funds_missing' | 'reverted' | 'refused' | 'operator_payout_gone' | 'retrying';

const subjectOf = (paymentId: string) => `payment:${paymentId}`;

export async function redeliverSettlements(deps: RedeliveryDeps, input: { limit: number }): Promise<RedeliverySummary> {
  const summary: RedeliverySummary = { checked: 0, confirmed: 0, pending: 0, failed: 0, resent: [], held: [] };
  const deadline = Date.now() + REDELIVERY_BUDGET_MS;
  for (const paymentId of await paymentsToRecheck(deps, input.limit)) {
    if (Date.now() > deadline) break;
    let outcome: RedeliveryOutcome;
    try {
      outcome = await redeliverSettlement(deps, paymentId);
    } catch (err) {
      // One Payment's trouble (a chain read, a lease) is not the pass's: the next pass tries again.
      deps.logger.warn({ paymentId, err }, 'redelivery check of a posted settlement failed');
      outcome = 'failed';
    }
    summary.checked += 1;
    if (outcome === 'resent' || outcome === 'held') summary[outcome].push(paymentId);
    else summary[outcome] += 1;
    await deps.settlement.prisma.settlementLeg.updateMany({
      where: { sourceType: 'payment', sourceId: paymentId, status: { in: ['broadcast', 'confirmed'] } },
      data: { recheckedAt: new Date() },
    });
  }
  return summary;
}

/** Those with an open alert first, then Payments whose settlement was posted within the window, the longest unread first. */
async function paymentsToRecheck(deps: RedeliveryDeps, limit: number): Promise<string[]> {
  const { prisma } = deps.settlement;
  const open = await prisma.operatorAlert.findMany({
    where: { kind: SETTLEMENT_DROPPED, resolvedAt: null },
    orderBy: { updatedAt: 'asc' },
    take: limit,
    select: { subject: true },
  });
  const alerted = open.map((a) => a.subject.replace(/^payment:/, ''));
  const since = new Date(Date.now() - REDELIVERY_WINDOW_MS);
  const recent = await prisma.$queryRaw<Array<{ id: string }>>`
    SELECT l.source_id AS id FROM settlement_legs l
    WHERE l.source_type = 'payment' AND l.status IN ('broadcast', 'confirmed') AND l.created_at >= ${since}
      AND EXISTS (SELECT 1 FROM ledger_postings lp WHERE lp.source_type = 'payment' AND lp.source_id = l.source_id AND lp.leg = 'settlement')
    GROUP BY l.source_id
    ORDER BY min(coalesce(l.rechecked_at, '-infinity'::timestamptz)), l.source_id
    LIMIT ${limit}`;
  return [...new Set([...alerted, ...recent.map((r) => r.id)])].slice(0, limit);
}

/** One Payment's posted settlement, re-read at depth and, when a leg is gone, sent again. */
export async function redeliverSettlement(deps: RedeliveryDeps, paymentId: string): Promise<RedeliveryOutcome> {
  const { prisma } = deps.settlement;
  const alerts: AlertDeps = { prisma, logger: deps.logger };
  const source: SettlementSource = { type: 'payment', id: paymentId };
  const p = await prisma.payment.findUniqueOrThrow({
    where: { id: paymentId },
    select: { appId: true, chainId: true, escrowAddress: true },
  });
  const read = await recheckLegs(deps.settlement, source, deps.confirmations(p.chainId));
  const legs = await loadLegs(prisma, source);
  const alert = async (state: AlertState, detail?: string) => {
    const seen = new Map(read.map((r) => [r.leg.id, r.chain]));
    await raiseAlert(alerts, {
      kind: SETTLEMENT_DROPPED,
      severity: 'critical',
      subject: subjectOf(paymentId),
      details: {
        paymentId,
        appId: p.appId,
        chainId: p.chainId,
        from: p.escrowAddress,
        state,
        ...(detail ? { detail } : {}),
        legs: (await loadLegs(prisma, source)).map((l) => ({
          leg: l.leg,
          txHash: l.txHash,
          nonce: l.nonce,
          status: l.status,
          onChain: seen.get(l.id) ?? null,
        })),
      },
    });
  };

  // A kind of leg with no live leg left: replaced and not signed again yet (to send), or reverted (an operator's).
  const dead = [...new Set(legs.map((l) => l.leg))].flatMap((kind) => {
    const ofKind = legs.filter((l) => l.leg === kind);
    return ofKind.some(isLive) ? [] : [ofKind[ofKind.length - 1]!];
  });
  if (dead.some((l) => l.status === 'reverted')) {
    await alert('reverted');
    return 'held';
  }
  // An operator's hand-made payout (mark-settled) has no signed bytes of ours to send again.
  if (read.some((r) => r.chain === 'not_found' && !r.leg.serialized)) {
    await alert('operator_payout_gone');
    return 'held';
  }
  const gone = dead.length > 0 || read.some((r) => r.chain === 'not_found');
  if (!gone) {
    if (read.every((r) => r.chain === 'confirmed')) {
      await resolveAlerts(alerts, SETTLEMENT_DROPPED, [subjectOf(paymentId)]);
      return 'confirmed';
    }
    // Mined again but not at depth yet, or back in a mempool: the chain has it, and it is watched until it is deep.
    await alert('confirming');
    return 'pending';
  }
  try {
    await sendPaymentSettlement(deps.settlement, paymentId, { redelivery: true });
  } catch (err) {
    if (err instanceof SettlementHeldError) {
      await alert(err.reason, err.message);
      return 'held';
    }
    if (err instanceof SettlementRefusedError) {
      await alert('refused', err.message);
      return 'held';
    }
    // A chain read, a broadcast or the sender's lease failed: off the chain all the same, tried again next pass.
    await alert('retrying', err instanceof Error ? err.message : String(err));
    throw err;
  }
  deps.logger.warn({ paymentId }, 'a posted settlement a reorg took off the chain was sent again');
  await alert('resent');
  return 'resent';
}
