/**
 * Names shared by the webhook workflows and the code that starts, signals and updates them. Plain
 * constants (no Temporal imports), so both the workflow bundle and the service can import them.
 */
export const WEBHOOK_DISPATCHER_WORKFLOW_ID = 'webhook-dispatcher';
export const WEBHOOK_DISPATCHER_WORKFLOW_TYPE = 'webhookDispatcher';
export const WEBHOOK_DELIVERY_WORKFLOW_TYPE = 'webhookDelivery';
/** Signal: "there may be new events or redeliveries" (wakes the dispatcher before its next poll). */
export const WEBHOOK_DISPATCHER_KICK_SIGNAL = 'kick';
/** Update: run dispatch passes until the backlog present now is drained; returns what was done. */
export const WEBHOOK_DISPATCH_NOW_UPDATE = 'dispatchNow';

/**
 * One delivery workflow per (event, endpoint) and round: the id is deterministic, so a retried dispatch
 * can't start a second one (Temporal refuses a second workflow with the same id). Round 1 is the
 * original delivery; round n > 1 is the (n - 1)th operator redelivery.
 */
export function webhookDeliveryWorkflowId(eventId: string, endpointId: string, round: number): string {
  const base = `webhook-delivery:${eventId}:${endpointId}`;
  return round <= 1 ? base : `${base}:redelivery-${round - 1}`;
}

export interface TWebhookDispatcherInput {
  /** How long the dispatcher waits for a kick before looking at the outbox again. */
  pollIntervalMs: number;
  /** Events (and queued deliveries) handled per pass. */
  batchSize: number;
}

export interface TDispatchPass {
  eventsDispatched: number;
  deliveriesCreated: number;
  deliveriesStarted: number;
  /** A batch was full: run another pass at once. */
  more: boolean;
}

export interface TDispatchSummary {
  passes: number;
  eventsDispatched: number;
  deliveriesCreated: number;
  deliveriesStarted: number;
}

export interface TWebhookDeliveryInput {
  deliveryId: string;
  round: number;
}

export interface TWebhookDeliveryResult {
  deliveryId: string;
  round: number;
  status: 'succeeded' | 'abandoned';
  attempts: number;
}
