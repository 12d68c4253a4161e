import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { Logger } from '../../logger';
import type { FundReturnEngine } from '../engine/pure/engine';

/**
 * The orphan return reconciler: every pending refund or recovery has a workflow.
 *
 * A return's row (which already reserves its amount) is committed before its workflow starts; when
 * Temporal is briefly down the commit can succeed and the start fail, and nothing else would ever send
 * it. This starts the workflow of every return still pending after a grace period (so it doesn't race a
 * create in progress). Idempotent: the workflow id is the return's, so a running or finished one
 * answers 'exists' and nothing is sent twice.
 */
export interface FundReturnWorkflowDeps {
  prisma: PrismaClient;
  chains: Pick<ChainRegistry, 'network'>;
  engine: Pick<FundReturnEngine, 'startFundReturn'>;
  logger: Pick<Logger, 'warn'>;
}

export async function startOrphanFundReturns(
  deps: FundReturnWorkflowDeps,
  input: { graceSeconds: number; limit: number },
): Promise<string[]> {
  const cutoff = new Date(Date.now() - input.graceSeconds * 1000);
  const pending = await deps.prisma.fundReturn.findMany({
    where: { status: 'pending', createdAt: { lt: cutoff } },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take: input.limit,
  });
  const started: string[] = [];
  for (const r of pending) {
    if ((await deps.engine.startFundReturn(r.id, deps.chains.network(r.chainId).confirmations)) !== 'started') continue;
    started.push(r.id);
    deps.logger.warn(
      { returnId: r.id, paymentId: r.paymentId, createdAt: r.createdAt.toISOString() },
      'started the workflow of an orphaned fund return',
    );
  }
  return started;
}
