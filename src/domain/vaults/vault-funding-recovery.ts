import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { VaultFundingEngine } from '../engine/pure/engine';
import { followLateFunding } from './vault-funding-transfer';

export interface VaultFundingSweep {
  /** Authorized operations whose workflow had never started (the authorize's start failed), started now. */
  started: number;
  /** Legs confirmed after their workflow gave up, posted now. */
  posted: number;
  /** Legs found reverted after their workflow gave up: the operation failed. */
  failed: number;
  /** Legs that may still be mined, not deep yet: looked at again next pass. */
  pending: number;
}

/**
 * The reconciliation pass's look at vault funding nothing else follows, in bounded batches:
 * - an authorized operation that no workflow has taken up: its workflow is started (one per operation,
 *   ever, so an operation already under way answers 'exists'), which sends it or, for a Payment no
 *   longer open, fails it; either way its reserve is not held for ever;
 * - an operation whose workflow gave up (failureReason set) while a leg of it may still be mined,
 *   including one failed while its send was still under way: followed at depth and posted once.
 */
export async function followVaultFunding(
  deps: { prisma: PrismaClient; chains: Pick<ChainRegistry, 'get' | 'network'>; engine: VaultFundingEngine },
  opts: { limit?: number } = {},
): Promise<VaultFundingSweep> {
  const limit = opts.limit ?? 200;
  const sweep: VaultFundingSweep = { started: 0, posted: 0, failed: 0, pending: 0 };
  const unstarted = await deps.prisma.vaultFundingOperation.findMany({
    where: { status: 'authorized', failureReason: null },
    orderBy: [{ authorizedAt: 'asc' }, { id: 'asc' }],
    take: limit,
  });
  for (const op of unstarted) {
    if ((await deps.engine.startVaultFunding(op.id, deps.chains.network(op.chainId).confirmations)) === 'started') sweep.started += 1;
  }
  const late = await deps.prisma.$queryRaw<Array<{ id: string }>>`
    SELECT o.id FROM vault_funding_operations o
    WHERE o.failure_reason IS NOT NULL AND o.status <> 'confirmed'
      AND EXISTS (SELECT 1 FROM settlement_legs l WHERE l.source_type = 'vault_funding' AND l.source_id = o.id AND l.status IN ('broadcast', 'confirmed'))
    ORDER BY o.updated_at ASC, o.id ASC
    LIMIT ${limit}`;
  for (const { id } of late) sweep[await followLateFunding(deps, id)] += 1;
  return sweep;
}
