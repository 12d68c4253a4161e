import { proxyActivities } from '@temporalio/workflow';
import type { ReconciliationActivities } from '../activities/reconciliation';
import {
  DEFAULT_PAYMENT_RECONCILIATION,
  DUST_PER_PASS,
  VAULT_RECEIPTS_PER_PASS,
  SETTLEMENTS_PER_PASS,
  MAX_LISTED_PAYMENTS,
  type PaymentReconciliationInput,
  type PaymentReconciliationSummary,
} from './contracts/payment-reconciliation';
import { BOUNDED } from './retry-profiles';

// A pass must end: a batch that keeps failing fails this pass; the next one starts over.
const bounded = proxyActivities<ReconciliationActivities>(BOUNDED);

/**
 * One pass of the orphan Payment reconciler over every Payment that is not terminal and older than
 * the grace period, batch by batch (keyset on the id, the cutoff fixed by the first batch): orphans
 * get their workflow started, Payments that moved on without a running workflow are alerted. Then
 * one batch of dust (transfers under the minimum, which wake no Payment workflow) is followed, one
 * of transfers into vaults (posted to the vault's book at depth), and one of posted settlements (sent
 * again when a reorg deeper than the confirmation depth took them off the chain).
 */
export async function paymentReconciliationWorkflow(input: PaymentReconciliationInput = {}): Promise<PaymentReconciliationSummary> {
  const graceSeconds = input.graceSeconds ?? DEFAULT_PAYMENT_RECONCILIATION.graceSeconds;
  const limit = input.batchSize ?? DEFAULT_PAYMENT_RECONCILIATION.batchSize;
  const summary: Omit<PaymentReconciliationSummary, 'dust' | 'vaultReceipts' | 'settlements'> = {
    cutoff: '',
    checked: 0,
    startedCount: 0,
    started: [],
    missingCount: 0,
    missing: [],
  };
  let cutoff: string | undefined;
  let afterId: string | null = null;
  do {
    const batch: Awaited<ReturnType<ReconciliationActivities['reconcilePaymentWorkflows']>> = await bounded.reconcilePaymentWorkflows({
      graceSeconds,
      cutoff,
      afterId,
      limit,
    });
    cutoff = batch.cutoff;
    summary.checked += batch.checked;
    summary.startedCount += batch.started.length;
    summary.missingCount += batch.missing.length;
    summary.started.push(...batch.started.slice(0, MAX_LISTED_PAYMENTS - summary.started.length));
    summary.missing.push(...batch.missing.slice(0, MAX_LISTED_PAYMENTS - summary.missing.length));
    afterId = batch.next;
  } while (afterId !== null);
  summary.cutoff = cutoff;
  const dust = await bounded.sweepDust({ limit: DUST_PER_PASS });
  const vaultReceipts = await bounded.followVaultReceipts({ limit: VAULT_RECEIPTS_PER_PASS });
  const settlements = await bounded.redeliverSettlements({ limit: SETTLEMENTS_PER_PASS });
  return { ...summary, dust, vaultReceipts, settlements };
}
