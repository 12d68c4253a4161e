import type { Client } from '@temporalio/client';
import type { Payment } from '../../generated/prisma/client';
import { PAYMENT_WORKFLOW, type PaymentWorkflowInput } from '../../../workflows/payment-api';

/** Settlement retry budget and polling, the same for every Payment (see docs/decisions.md). */
export const SETTLEMENT_POLICY: PaymentWorkflowInput['settlement'] = {
  maxAttempts: 4,
  retryBackoffSeconds: 2,
  confirmationPollSeconds: 0.1,
  maxPollSeconds: 2,
  // ~10 minutes of polling before a broadcast settlement counts as unconfirmed.
  maxConfirmationChecks: 310,
};

export function paymentWorkflowInput(p: Payment, confirmations: number): PaymentWorkflowInput {
  if (!p.escrowAddress) throw new Error(`payment ${p.id} has no escrow address`);
  return {
    paymentId: p.id,
    intent: p.intent as PaymentWorkflowInput['intent'],
    requiredAtomic: p.amountAtomic.toString(),
    expiresAt: p.expiresAt.toISOString(),
    expiresInSeconds: Math.max(0, Math.round((p.expiresAt.getTime() - p.createdAt.getTime()) / 1000)),
    chainId: p.chainId,
    tokenAddress: p.tokenAddress,
    escrowAddress: p.escrowAddress,
    confirmations,
    settlement: SETTLEMENT_POLICY,
  };
}

/** Workflow id = Payment id: Temporal refuses a second run with the same id, so a Payment has one. */
export async function startPaymentWorkflow(client: Client, taskQueue: string, input: PaymentWorkflowInput): Promise<void> {
  await client.workflow.start(PAYMENT_WORKFLOW, { taskQueue, workflowId: input.paymentId, args: [input] });
}
