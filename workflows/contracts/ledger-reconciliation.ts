import type { BooksDifference } from '../../src/domain/ledger/pure/reconcile-report';

/**
 * The LedgerReconciliationWorkflow's contract: one pass of the books against the chain, which raises
 * and resolves the ledger_difference alerts. Run every minute by a Temporal Schedule.
 */
export const LEDGER_RECONCILIATION_WORKFLOW = 'ledgerReconciliationWorkflow';

/** One id per pass started by hand (the schedule names its runs itself). */
export function ledgerReconciliationWorkflowId(startedAt: string): string {
  return `ledger-reconciliation:${startedAt}`;
}

export interface LedgerReconciliationInput {
  /** Addresses read per activity. */
  pageSize?: number;
  /** An address that differs is looked at again after this long before it raises an alert. */
  recheckAfterSeconds?: number;
}

export const DEFAULT_LEDGER_RECONCILIATION: Required<LedgerReconciliationInput> = { pageSize: 200, recheckAfterSeconds: 30 };

/** At most this many differences are listed in the summary (all of them are alerts). */
export const MAX_LISTED_DIFFERENCES = 100;

export interface LedgerReconciliationSummary {
  /** (address, asset) balances compared. */
  checked: number;
  /** Amounts in flight seen by the first look. */
  inFlight: number;
  /** Differences the second look confirmed. */
  differenceCount: number;
  differences: BooksDifference[];
  alerts: { raised: number; resolved: number; open: number };
}
