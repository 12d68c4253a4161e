import { defineSignal, defineUpdate } from '@temporalio/workflow';

/**
 * The contracts of the two webhook workflows: the long-running dispatcher (outbox -> deliveries) and
 * one delivery workflow per (event, endpoint) and round.
 */
export const WEBHOOK_DISPATCHER_WORKFLOW = 'webhookDispatcher';
/** One dispatcher per namespace. */
export const WEBHOOK_DISPATCHER_WORKFLOW_ID = 'webhook-dispatcher';

export interface WebhookDispatcherInput {
  /** How long the dispatcher waits for a kick before looking at the outbox again. */
  pollIntervalMs: number;
  /** Events (and queued deliveries) handled per pass. */
  batchSize: number;
}

export const DEFAULT_WEBHOOK_DISPATCHER: WebhookDispatcherInput = { pollIntervalMs: 1000, batchSize: 100 };

export interface DispatchPass {
  eventsDispatched: number;
  deliveriesCreated: number;
  deliveriesStarted: number;
  /** A batch was full: run another pass at once. */
  more: boolean;
}

export interface DispatchSummary {
  passes: number;
  eventsDispatched: number;
  deliveriesCreated: number;
  deliveriesStarted: number;
}

/** "There may be new events or redeliveries": wakes the dispatcher before its next poll. */
export const webhookDispatcherKickSignal = defineSignal('kick');
/** Runs dispatch passes until the backlog present now is drained; answers what was done. */
export const webhookDispatchNowUpdate = defineUpdate<DispatchSummary>('dispatchNow');

export const WEBHOOK_DELIVERY_WORKFLOW = 'webhookDelivery';

/**
 * One delivery workflow per (event, endpoint) and round: the id is deterministic, so a retried dispatch
 * can't start a second one. Round 1 is the original delivery; round n > 1 the (n - 1)th redelivery.
 */
export function webhookDeliveryWorkflowId(eventId: string, endpointId: string, round: number): string {
  const base = `webhook-delivery:${eventId}:${endpointId}`;
  return round <= 1 ? base : `${base}:redelivery-${round - 1}`;
}

export interface WebhookDeliveryInput {
  deliveryId: string;
  round: number;
  /** Absent means true: the first attempt runs as a local activity (false: tests on time skipping). */
  firstAttemptLocal?: false;
}

export interface WebhookDeliveryResult {
  deliveryId: string;
  round: number;
  status: 'succeeded' | 'abandoned';
  attempts: number;
}

/** Activity failure types the webhook workflows treat as final. */
export const WEBHOOK_FAILURES = {
  deliveryGone: 'webhook_delivery_gone',
  secretUnreadable: 'webhook_signing_secret_unreadable',
} as const;
