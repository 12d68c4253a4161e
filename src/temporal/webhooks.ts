import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  WEBHOOK_DISPATCH_NOW_UPDATE,
  WEBHOOK_DISPATCHER_KICK_SIGNAL,
  WEBHOOK_DISPATCHER_WORKFLOW_ID,
  WEBHOOK_DISPATCHER_WORKFLOW_TYPE,
  type TDispatchSummary,
  type TWebhookDispatcherInput,
} from '../domain/webhooks/workflow-names';

export const DEFAULT_WEBHOOK_DISPATCHER: TWebhookDispatcherInput = { pollIntervalMs: 1000, batchSize: 100 };

/**
 * Makes sure the webhook dispatcher workflow runs; call it at worker start-up. Idempotent: a running
 * dispatcher is left alone (its settings stay); a finished, failed or terminated one is started again.
 */
export async function ensureWebhookDispatcher(
  client: Client,
  taskQueue: string,
  options: Partial<TWebhookDispatcherInput> = {},
): Promise<{ started: boolean }> {
  const args: [TWebhookDispatcherInput] = [{ ...DEFAULT_WEBHOOK_DISPATCHER, ...options }];
  try {
    await client.workflow.start(WEBHOOK_DISPATCHER_WORKFLOW_TYPE, { workflowId: WEBHOOK_DISPATCHER_WORKFLOW_ID, taskQueue, args });
    return { started: true };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return { started: false };
    throw err;
  }
}

/** Wakes the dispatcher now instead of at its next poll. Best effort: a missing dispatcher is ignored. */
export async function kickWebhookDispatcher(client: Client): Promise<void> {
  try {
    await client.workflow.getHandle(WEBHOOK_DISPATCHER_WORKFLOW_ID).signal(WEBHOOK_DISPATCHER_KICK_SIGNAL);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
}

/**
 * Runs dispatch passes until everything committed before this call is dispatched, and returns what was
 * done (deliveries' workflows then exist). For operators and tests; the dispatcher must be running.
 */
export async function dispatchWebhooksNow(client: Client): Promise<TDispatchSummary> {
  return client.workflow.getHandle(WEBHOOK_DISPATCHER_WORKFLOW_ID).executeUpdate<TDispatchSummary, []>(WEBHOOK_DISPATCH_NOW_UPDATE);
}
