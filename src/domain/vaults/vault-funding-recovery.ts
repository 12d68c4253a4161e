import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { VaultFundingEngine } from '../engine';

export interface VaultFundingSweep {
  /** Authorized operations whose workflow had never started (the authorize's start failed), started now. */
  started: number;
}

/**
 * The reconciliation pass's look at vault funding nothing else follows, in bounded batches:
 * - an authorized operation that no workflow has taken up: its workflow is started (one per operation,
 *   ever, so an operation already under way answers 'exists'), which sends it or, for a Payment no
 *   longer open, fails it; either way its reserve is not held for ever.
 */
export async function followVaultFunding(
  deps: { prisma: PrismaClient; chains: Pick<ChainRegistry, 'get' | 'network'>; engine: VaultFundingEngine },
  opts: { limit?: number } = {},
): Promise<VaultFundingSweep> {
  const limit = opts.limit ?? 200;
  const sweep: VaultFundingSweep = { started: 0 };
  const unstarted = await deps.prisma.vaultFundingOperation.findMany({
    where: { status: 'authorized', failureReason: null },
    orderBy: [{ authorizedAt: 'asc' }, { id: 'asc' }],
    take: limit,
  });
  for (const op of unstarted) {
    if ((await deps.engine.startVaultFunding(op.id, deps.chains.network(op.chainId).confirmations)) === 'started') sweep.started += 1;
  }
  return sweep;
}
