import { defineSignal } from '@temporalio/workflow';
import type { DepositStart } from '../../src/domain/engine/pure/engine';
import type { ResolutionRequest } from '../../src/domain/operators/pure/operator-resolution';

/** The DepositWorkflow's contract: its name, id, input, messages and failure types. */
export const DEPOSIT_WORKFLOW = 'depositWorkflow';

/**
 * One workflow per inbound transfer, named after its identity (see src/chain/transfer-key.ts):
 * Temporal's workflow-id uniqueness is what makes a deposit once, even when a reorg mines the
 * transfer again at another log index. Deposits started before ordinals were named
 * `deposit:<chainId>:<txHash>:<logIndex>`; each deposit row keeps its workflow's id.
 */
export function depositWorkflowId(t: { chainId: number; txHash: string; toAddress: string; ordinal: number }): string {
  return `deposit:${t.chainId}:${t.txHash.toLowerCase()}:${t.toAddress.toLowerCase()}:${t.ordinal}`;
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
  /** As PaymentSettlementPolicy.safetyNetFloorSeconds. */
  safetyNetFloorSeconds?: number;
  /** As PaymentSettlementPolicy.shortStepsLocal. */
  shortStepsLocal?: false;
}

/** The same for every deposit (see docs/decisions/deposits.md). */
export const DEPOSIT_SETTLEMENT_POLICY: DepositSettlementPolicy = {
  maxAttempts: 3,
  retryBackoffSeconds: 5,
  confirmationPollSeconds: 1,
  maxConfirmationChecks: 600,
};

export interface DepositWorkflowInput extends DepositStart {
  policy: DepositSettlementPolicy;
}

export interface DepositWorkflowResult {
  status: string;
  statusVersion: number;
}

/** An operator's release of a requires_intervention hold. */
export const resolveDepositSignal = defineSignal<[ResolutionRequest]>('resolveDeposit');
