import { defineSignal, defineUpdate } from '@temporalio/workflow';

/** The PaymentWorkflow's messages, shared by the workflow, the API and the chain scanner. */
export interface PaymentWorkflowInput {
  paymentId: string;
  intent: 'receive' | 'send';
  requiredAtomic: string;
  expiresAt: string;
  /** The expiry timer counts from the workflow's own start (its clock), not from the API's clock. */
  expiresInSeconds: number;
  chainId: number;
  tokenAddress: string;
  escrowAddress: string;
  confirmations: number;
  settlement: {
    maxAttempts: number;
    retryBackoffSeconds: number;
    /** First confirmation poll; each later poll waits twice as long, up to maxPollSeconds. */
    confirmationPollSeconds: number;
    maxPollSeconds: number;
    maxConfirmationChecks: number;
  };
}

export interface TransferSeen {
  key: string;
  txHash: string;
  logIndex: number;
  amountAtomic: string;
}

export interface OperatorResolution {
  action: 'retry' | 'mark-settled' | 'fail';
  txHash?: string;
  reason?: string;
  actor: string;
}

export interface CancelRequest {
  reasonCode: string;
  reason: string | null;
}

export type CancelResult = { outcome: 'cancelled' | 'already_cancelled' };

export const PAYMENT_WORKFLOW = 'paymentWorkflow';
export const transferDetectedSignal = defineSignal<[TransferSeen]>('transferDetected');
export const resolveSignal = defineSignal<[OperatorResolution]>('resolve');
export const cancelUpdate = defineUpdate<CancelResult, [CancelRequest]>('cancel');

/** ApplicationFailure type for a refused cancel; details[0] is the reason code. */
export const PAYMENT_NOT_CANCELABLE = 'payment_not_cancelable';
