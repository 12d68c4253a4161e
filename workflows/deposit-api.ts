import { defineSignal } from '@temporalio/workflow';

/** The DepositWorkflow's messages and names, shared by the workflow, the scanner's handler and the CLI. */
export interface DepositWorkflowInput {
  depositId: string;
  depositAddressId: string;
  chainId: number;
  txHash: string;
  logIndex: number;
  blockNumber: string;
  tokenAddress: string;
  fromAddress: string;
  toAddress: string;
  amountAtomic: string;
  /** The asset actually transferred (from the network's configuration). */
  asset: { symbol: string; decimals: number };
  /** false when the token is not the asset the deposit address was created for. */
  assetAccepted: boolean;
  minimumDeposit: { amountAtomic: string; inclusive: boolean };
  fees: { platformFeeBps: number; partnerFeeBps: number };
  /** The network's confirmation depth. */
  confirmations: number;
  policy: DepositSettlementPolicy;
}

export interface DepositSettlementPolicy {
  /** Settlement attempts (each one a broadcast try) before the deposit is held for an operator. */
  maxAttempts: number;
  /** Backoff between attempts: retryBackoffSeconds * 2^(attempt-1). */
  retryBackoffSeconds: number;
  /** How often the source transfer and the settlement are re-read. */
  confirmationPollSeconds: number;
  /** Checks of a broadcast settlement before it counts as unconfirmed (held). */
  maxConfirmationChecks: number;
}

export interface DepositResolutionRequest {
  action: 'retry' | 'mark-settled' | 'fail';
  txHash?: string;
  reason?: string;
  actor: string;
}

export interface ReconciliationInput {
  /** Settled deposits settled at or after this time are re-verified (default: the last 7 days). */
  settledSince?: string;
  batchSize?: number;
}

export interface ReconciliationSummary {
  checked: number;
  valid: number;
  pending: number;
  reversed: string[];
}

export const DEPOSIT_WORKFLOW = 'depositWorkflow';
export const DEPOSIT_RECONCILIATION_WORKFLOW = 'depositReconciliationWorkflow';

/** One workflow per inbound transfer: Temporal's workflow-id uniqueness is what makes a deposit once. */
export function depositWorkflowId(chainId: number, txHash: string, logIndex: number): string {
  return `deposit:${chainId}:${txHash.toLowerCase()}:${logIndex}`;
}

export const resolveDepositSignal = defineSignal<[DepositResolutionRequest]>('resolveDeposit');

/** ApplicationFailure type of a settlement that can't be attempted at all (details[0] is the reason code). */
export const DEPOSIT_SETTLEMENT_REFUSED = 'DepositSettlementRefused';
