import type { Duration } from '@temporalio/common';
import { DEPOSIT_RECONCILIATION_WORKFLOW } from '../../workflows/contracts/deposit-reconciliation';
import { LEDGER_RECONCILIATION_WORKFLOW } from '../../workflows/contracts/ledger-reconciliation';
import { PAYMENT_RECONCILIATION_WORKFLOW } from '../../workflows/contracts/payment-reconciliation';

/**
 * The service's Temporal Schedules (created or updated by the gateway's ensureSchedules() when a
 * worker starts). Each starts one pass of a reconciliation workflow; a pass still running when the
 * next is due makes the schedule skip that one (overlap SKIP), and a pass has an execution timeout so
 * a stuck one can't block its schedule forever. See docs/decisions/ledger-and-money-on-chain.md "Reconciliation".
 */
export interface ServiceSchedule {
  scheduleId: string;
  workflowType: string;
  /** Temporal appends the scheduled time to it: one id per run. */
  workflowId: string;
  /** e.g. '1 minute'. */
  every: Duration;
  args: unknown[];
  executionTimeout: Duration;
  description: string;
}

export const SERVICE_SCHEDULES: readonly ServiceSchedule[] = [
  {
    scheduleId: 'payment-reconciliation',
    workflowType: PAYMENT_RECONCILIATION_WORKFLOW,
    workflowId: 'payment-reconciliation',
    every: '1 minute',
    args: [{}],
    executionTimeout: '10 minutes',
    description:
      'starts the workflow of every Payment whose create could not (orphans), alerts on Payments whose workflow is gone, sends again a posted settlement a deep reorg dropped',
  },
  {
    scheduleId: 'ledger-reconciliation',
    workflowType: LEDGER_RECONCILIATION_WORKFLOW,
    workflowId: 'ledger-reconciliation',
    every: '1 minute',
    args: [{}],
    executionTimeout: '10 minutes',
    description: 'compares the books of every service address with its on-chain balances; raises and resolves ledger_difference alerts',
  },
  {
    scheduleId: 'deposit-reconciliation',
    workflowType: DEPOSIT_RECONCILIATION_WORKFLOW,
    workflowId: 'deposit-reconciliation',
    every: '10 minutes',
    args: [{}],
    executionTimeout: '30 minutes',
    description: 're-verifies deposits settled in the last 7 days; reverses those a deep reorg removed',
  },
];
