/** The DepositReconciliationWorkflow's contract: one pass over recently settled deposits. */
export const DEPOSIT_RECONCILIATION_WORKFLOW = 'depositReconciliationWorkflow';

/** One id per pass, named by when it started. */
export function depositReconciliationWorkflowId(startedAt: string): string {
  return `deposit-reconciliation:${startedAt}`;
}

export interface ReconciliationInput {
  /** Deposits settled at or after this time are re-verified (default: the last 7 days). */
  settledSince?: string;
  batchSize?: number;
}

export interface ReconciliationSummary {
  checked: number;
  valid: number;
  pending: number;
  reversed: string[];
}
