import type { PrismaClient } from '../../db/client';
import type { ChainAdvanceEngine, ChainWaiter } from '../engine/pure/engine';

/**
 * At most this many Payments, and as many deposits, are signalled per scan: a scan's fan-out (one
 * signal each, 16 at a time) stays well under a block time even on a busy network. Workflows beyond
 * the cap (the longest waiting) still read the chain on their safety-net timer: latency, not money.
 */
export const MAX_WAITERS_PER_SCAN = 500;
const SIGNALS_AT_ONCE = 16;

/**
 * The workflows with something in flight on a network, one indexed query each (partial indexes of
 * migration 20261122090000): Payments with a transfer still pending (open, final or held: each is
 * followed to its resolution) or a settlement leg broadcast and not yet confirmed; deposits whose
 * source is not yet confirmed (detected, confirming) or whose settlement legs are broadcast and not
 * yet confirmed.
 */
export async function chainWaiters(prisma: PrismaClient, chainId: number, cap = MAX_WAITERS_PER_SCAN): Promise<ChainWaiter[]> {
  // Newest first: what just arrived is what a block can move on now (a transfer pending for long
  // is likely dropped, or its Payment's workflow gone and left to the reconciler).
  const payments = await prisma.$queryRaw<Array<{ id: string }>>`
    SELECT id FROM (
      SELECT payment_id AS id, created_at FROM payment_transfers WHERE chain_id = ${chainId} AND status = 'pending'
      UNION ALL
      SELECT source_id AS id, created_at FROM settlement_legs WHERE chain_id = ${chainId} AND source_type = 'payment' AND status = 'broadcast'
    ) w GROUP BY id ORDER BY max(created_at) DESC LIMIT ${cap}`;
  // A settling deposit waits on blocks only once its legs are broadcast (before that, on its activity
  // or its backoff): told earlier, it spends a workflow task on a block it can't use.
  const deposits = await prisma.$queryRaw<Array<{ id: string }>>`
    SELECT workflow_id AS id FROM (
      SELECT workflow_id, created_at FROM deposits WHERE chain_id = ${chainId} AND status IN ('detected', 'confirming')
      UNION ALL
      SELECT d.workflow_id, d.created_at FROM settlement_legs l JOIN deposits d ON d.id = l.source_id
        WHERE l.chain_id = ${chainId} AND l.source_type = 'deposit' AND l.status = 'broadcast' AND d.status = 'settling'
    ) w GROUP BY workflow_id ORDER BY max(created_at) DESC LIMIT ${cap}`;
  return [...deposits.map((r) => ({ depositWorkflowId: r.id })), ...payments.map((r) => ({ paymentId: r.id }))];
}

/**
 * Tells every workflow waiting on the network that it advanced to `block`; answers how many were told.
 * Best effort: a signal that fails is skipped (that workflow reads the chain on its safety-net timer),
 * so one unreachable workflow never fails, or holds up, the scan that found the block.
 */
export async function notifyChainAdvanced(
  deps: { prisma: PrismaClient; engine: Pick<ChainAdvanceEngine, 'chainAdvanced'> },
  chainId: number,
  block: bigint,
  /** Called after each signal: the scan activity heartbeats, so a long fan-out is not taken for a dead worker. */
  progress?: () => void,
): Promise<number> {
  const waiters = await chainWaiters(deps.prisma, chainId);
  const queue = [...waiters];
  let told = 0;
  const lanes = Array.from({ length: Math.min(SIGNALS_AT_ONCE, queue.length) }, async () => {
    for (let w = queue.shift(); w; w = queue.shift()) {
      if (
        await deps.engine.chainAdvanced(w, block).then(
          () => true,
          () => false,
        )
      )
        told += 1;
      progress?.();
    }
  });
  await Promise.all(lanes);
  return told;
}
