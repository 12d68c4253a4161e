import { proxyActivities, sleep } from '@temporalio/workflow';
import type { ReconciliationActivities } from '../activities/reconciliation';
import type { BooksDifference } from '../src/domain/ledger/pure/reconcile-report';
import {
  DEFAULT_LEDGER_RECONCILIATION,
  MAX_LISTED_DIFFERENCES,
  type LedgerReconciliationInput,
  type LedgerReconciliationSummary,
} from './contracts/ledger-reconciliation';
import { BOUNDED } from './retry-profiles';

// A pass must end: a page that can't be read after a few tries fails this pass; the next one retries.
const bounded = proxyActivities<ReconciliationActivities>({ ...BOUNDED, startToCloseTimeout: '5m' });

/**
 * One pass of the books against the chain: every service address, page by page; then, after a pause,
 * a second look at the addresses that differed (a transfer the scanner had not read yet, a leg
 * recorded after the first look's snapshot); what still differs raises an alert, and open alerts of
 * differences that are gone are resolved.
 */
export async function ledgerReconciliationWorkflow(input: LedgerReconciliationInput = {}): Promise<LedgerReconciliationSummary> {
  const pageSize = input.pageSize ?? DEFAULT_LEDGER_RECONCILIATION.pageSize;
  const recheckAfterSeconds = input.recheckAfterSeconds ?? DEFAULT_LEDGER_RECONCILIATION.recheckAfterSeconds;
  let checked = 0;
  let inFlight = 0;
  const first: BooksDifference[] = [];
  let afterAddress: string | null = null;
  do {
    const page: Awaited<ReturnType<ReconciliationActivities['reconcileLedgerPage']>> = await bounded.reconcileLedgerPage({
      afterAddress,
      limit: pageSize,
    });
    checked += page.checked;
    inFlight += page.inFlight;
    first.push(...page.differences);
    afterAddress = page.next;
  } while (afterAddress !== null);

  // Books without an address come from the database alone: nothing to wait for.
  let confirmed = first.filter((d) => d.address === null);
  const suspects = [...new Set(first.flatMap((d) => (d.address === null ? [] : [d.address])))];
  if (suspects.length > 0) {
    await sleep(recheckAfterSeconds * 1000);
    confirmed = [...confirmed, ...(await bounded.reconcileLedgerAddresses({ addresses: suspects })).differences];
  }
  const alerts = await bounded.syncLedgerAlerts({ differences: confirmed });
  return { checked, inFlight, differenceCount: confirmed.length, differences: confirmed.slice(0, MAX_LISTED_DIFFERENCES), alerts };
}
