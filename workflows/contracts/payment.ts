import { defineSignal, defineUpdate } from '@temporalio/workflow';
import type { CancelRequest, ClockAdvance, PaymentStart, PayoutUpdateSeen, TransferSeen } from '../../src/domain/engine/pure/engine';
import type { ResolutionRequest } from '../../src/domain/operators/pure/operator-resolution';
import type { CarriedPaymentState } from '../../src/domain/payments/pure/payment-serde';

export type { CancelRequest, ClockAdvance, PaymentStart, PayoutUpdateSeen, TransferSeen };

/** The PaymentWorkflow's contract: its name, id, input, messages and failure types. */
export const PAYMENT_WORKFLOW = 'paymentWorkflow';

/** Workflow id = Payment id: Temporal refuses a second run with the same id, so a Payment has one. */
export function paymentWorkflowId(paymentId: string): string {
  return paymentId;
}

export interface PaymentSettlementPolicy {
  /** Settlement attempts (each one a broadcast try) before the Payment is held for an operator. */
  maxAttempts: number;
  /** Backoff between attempts: retryBackoffSeconds * 2^(attempt-1). */
  retryBackoffSeconds: number;
  /** First confirmation poll; each later poll waits twice as long, up to maxPollSeconds. */
  confirmationPollSeconds: number;
  maxPollSeconds: number;
  /** Checks of a broadcast settlement before it counts as unconfirmed (held). */
  maxConfirmationChecks: number;
  /**
   * The shortest safety-net wait of a run woken by blocks (default 2 s). Tests only set it lower:
   * the test harness's scanner scans when poked, not on every block, so its workflows need the poll.
   */
  safetyNetFloorSeconds?: number;
  /**
   * Events a run may reach before it continues as new (default MAX_RUN_EVENTS). Tests only set it
   * lower, to reach a continue-as-new with a few transfers instead of seventy.
   */
  maxRunEvents?: number;
  /** Bank Payments: the safety-net read of the provider's payout between its callbacks (default 60 s). */
  payoutPollSeconds?: number;
  /** Tests only: `false` runs the short steps as activity tasks (see workflows/short-steps.ts). */
  shortStepsLocal?: false;
}

/** The same for every Payment (see docs/decisions/payments.md). */
export const PAYMENT_SETTLEMENT_POLICY: PaymentSettlementPolicy = {
  maxAttempts: 4,
  retryBackoffSeconds: 2,
  confirmationPollSeconds: 0.1,
  maxPollSeconds: 2,
  // ~10 minutes of polling before a broadcast settlement counts as unconfirmed.
  maxConfirmationChecks: 310,
};

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
  settlement: PaymentSettlementPolicy;
  /**
   * A bank Payment: its quote's lifetime from the Payment's creation (timed, like expiry, on the
   * workflow's own clock from its start). Absent for upa Payments.
   */
  payout?: { quoteExpiresInSeconds: number };
  /** Set when the run starts again for a finished Payment (a late transfer): its state is loaded. */
  resume?: boolean;
  /**
   * The state carried across continue-as-new, where expiry stands on the workflow clock, and how far a
   * sandbox app moved the Payment's clock (absent: not moved).
   */
  carried?: { state: CarriedPaymentState; expiresAtMs: number; clockAdvancedSeconds?: number };
}

export function paymentWorkflowInput(p: PaymentStart, confirmations: number, opts: { resume?: boolean } = {}): PaymentWorkflowInput {
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
    settlement: PAYMENT_SETTLEMENT_POLICY,
    ...(p.payoutQuoteExpiresAt
      ? { payout: { quoteExpiresInSeconds: Math.max(0, Math.floor((p.payoutQuoteExpiresAt.getTime() - p.createdAt.getTime()) / 1000)) } }
      : {}),
    ...(opts.resume ? { resume: true } : {}),
  };
}

export interface PaymentWorkflowResult {
  status: string;
  statusVersion: number;
}

export type CancelResult = { outcome: 'cancelled' | 'already_cancelled' };

export const transferDetectedSignal = defineSignal<[TransferSeen]>('transferDetected');
/** A bank Payment's payout moved at the provider (its callback). */
export const payoutUpdatedSignal = defineSignal<[PayoutUpdateSeen]>('payoutUpdated');
/** An operator's release of a requires_intervention hold. */
export const resolveSignal = defineSignal<[ResolutionRequest]>('resolve');
/**
 * A sandbox app moved the Payment's clock: `advancedSeconds` is where it now stands (the sum of every
 * move), so a repeated or reordered signal moves it no further. Its timers then decide as they would
 * have that much later.
 */
export const advanceClockSignal = defineSignal<[ClockAdvance]>('advanceClock');
/** The workflow decides against its own state, so a cancel can't race a transfer not yet recorded. */
export const cancelUpdate = defineUpdate<CancelResult, [CancelRequest]>('cancel');

/**
 * ApplicationFailure types of a provider call (activities/failures.ts): the provider refused it for
 * good (or its quote had lapsed), or can't tell whether it holds the payout. Both are non-retryable;
 * an unavailable provider is a plain, retried error.
 */
export const PROVIDER_FAILURE = 'provider_failure';
export const PROVIDER_STATE_UNCERTAIN = 'provider_state_uncertain';

/** ApplicationFailure type of a refused cancel; details[0] is the reason code. */
export const PAYMENT_NOT_CANCELABLE = 'payment_not_cancelable';
