/**
 * The PaymentReconciliationWorkflow's contract: one pass of the orphan Payment reconciler (every
 * Payment that is not terminal has a running workflow). Run every minute by a Temporal Schedule.
 */
export const PAYMENT_RECONCILIATION_WORKFLOW = 'paymentReconciliationWorkflow';

/** One id per pass started by hand (the schedule names its runs itself). */
export function paymentReconciliationWorkflowId(startedAt: string): string {
  return `payment-reconciliation:${startedAt}`;
}

export interface PaymentReconciliationInput {
  /** Payments younger than this are left alone: their create may still be starting the workflow. */
  graceSeconds?: number;
  /** Payments looked at per activity. */
  batchSize?: number;
}

export const DEFAULT_PAYMENT_RECONCILIATION: Required<PaymentReconciliationInput> = { graceSeconds: 60, batchSize: 100 };

/** Dust transfers followed per pass (the oldest first). */
export const DUST_PER_PASS = 200;

/** Vault receipts followed per pass, and as many posted ones re-verified (see vault-receipts.ts). */
export const VAULT_RECEIPTS_PER_PASS = 200;

/** Payments whose posted settlement is re-read per pass (src/domain/payments/payment-redelivery.ts). */
export const SETTLEMENTS_PER_PASS = 100;

/** At most this many ids are listed per outcome (the counts are exact). */
export const MAX_LISTED_PAYMENTS = 100;

export interface PaymentReconciliationSummary {
  /** Payments created before this were looked at. */
  cutoff: string;
  checked: number;
  /** Orphans whose workflow this pass started. */
  startedCount: number;
  started: string[];
  /** Payments that moved on but whose workflow does not run: alerted, not restarted. */
  missingCount: number;
  missing: string[];
  /** Transfers under the minimum followed by this pass: held once confirmed, nothing once dropped. */
  dust: { checked: number; held: number; dropped: number; pending: number };
  /** Transfers into vaults followed by this pass: posted at depth, dropped, or reversed once gone. */
  vaultReceipts: {
    checked: number;
    posted: number;
    dropped: number;
    pending: number;
    reversed: number;
    /** Vault funding no workflow follows (src/domain/vaults/vault-funding-recovery.ts); absent in passes before it. */
    funding?: { started: number; posted: number; failed: number; pending: number };
  };
  /** Posted Payment settlements re-read by this pass, and those a reorg took off the chain sent again. */
  settlements: { checked: number; confirmed: number; pending: number; failed: number; resent: string[]; held: string[] };
}
