import { proxyActivities } from '@temporalio/workflow';
import type { DepositActivities } from '../activities/deposits';
import type { ReconciliationInput, ReconciliationSummary } from './contracts/deposit-reconciliation';
import { BOUNDED } from './retry-profiles';

// An operator's pass must end: a deposit that can't be re-read after a few tries fails the pass.
const bounded = proxyActivities<DepositActivities>(BOUNDED);

const WEEK_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * One reconciliation pass: re-verifies the source transfer of every deposit settled since
 * `settledSince` at the network's confirmation depth. One that is no longer valid (e.g. a reorg deeper
 * than the confirmation depth) is reversed: deposit.reversed and a reversing ledger posting, no
 * on-chain clawback. Run by `npm run cli -- deposits reconcile` (or a schedule).
 */
export async function depositReconciliationWorkflow(input: ReconciliationInput = {}): Promise<ReconciliationSummary> {
  const settledSince = input.settledSince ?? new Date(Date.now() - WEEK_MS).toISOString();
  const batchSize = input.batchSize ?? 100;
  const summary: ReconciliationSummary = { checked: 0, valid: 0, pending: 0, reversed: [] };
  let afterId: string | undefined;
  for (;;) {
    const ids = await bounded.listDepositsToReconcile({ settledSince, afterId, limit: batchSize });
    for (const depositId of ids) {
      const outcome = await bounded.reconcileDeposit({ depositId, at: new Date(Date.now()).toISOString() });
      if (outcome === 'skipped') continue;
      summary.checked += 1;
      if (outcome === 'valid') summary.valid += 1;
      else if (outcome === 'pending') summary.pending += 1;
      else summary.reversed.push(depositId);
    }
    if (ids.length < batchSize) break;
    afterId = ids[ids.length - 1];
  }
  return summary;
}
