import { Context } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { PrismaClient } from '../src/db/client';
import type { Logger } from '../src/logger';
import { abandonDelivery, attemptDelivery, DeliveryGoneError, type AttemptInput, type AttemptReport } from '../src/domain/webhooks/attempt';
import type { DestinationPolicy } from '../src/domain/webhooks/destination';
import { claimEventsIntoDeliveries, markDeliveryStarted, queuedDeliveries } from '../src/domain/webhooks/dispatch';
import { SigningSecretUnreadableError } from '../src/domain/webhooks/signing-secrets';
import {
  WEBHOOK_DELIVERY_WORKFLOW_TYPE,
  webhookDeliveryWorkflowId,
  type TDispatchPass,
  type TWebhookDeliveryInput,
} from '../src/domain/webhooks/workflow-names';

export interface WebhookActivityDeps {
  prisma: PrismaClient;
  logger: Logger;
  /** Decrypts endpoint signing secrets; the same SERVICE_SECRET the API encrypted them with. */
  serviceSecret: string;
  /** Re-checked at every attempt (DNS rebinding). Absent means the spec's default: private refused. */
  destinations?: DestinationPolicy;
  /** Starts delivery workflows; defaults to the worker's own client. */
  temporal?: Client;
  http?: { timeoutMs?: number; maxResponseBytes?: number };
}

export const WEBHOOK_HTTP_TIMEOUT_MS = 10_000;

/** Activity failure types the webhook workflows treat as final. */
export const WEBHOOK_FAILURE_TYPES = {
  deliveryGone: 'webhook_delivery_gone',
  secretUnreadable: 'webhook_signing_secret_unreadable',
} as const;

export function createWebhookActivities(deps: WebhookActivityDeps) {
  const attemptDeps = {
    prisma: deps.prisma,
    logger: deps.logger,
    serviceSecret: deps.serviceSecret,
    destinations: deps.destinations ?? { allowPrivateDestinations: false },
    http: {
      timeoutMs: deps.http?.timeoutMs ?? WEBHOOK_HTTP_TIMEOUT_MS,
      maxResponseBytes: deps.http?.maxResponseBytes ?? 16 * 1024,
    },
  };

  return {
    /**
     * One dispatcher pass: events -> queued deliveries (one transaction), then a workflow per queued
     * delivery. Deterministic workflow ids with REJECT_DUPLICATE: a retried pass (or an overlapping
     * one) finds the workflow already there, running or finished, and counts it as started.
     */
    async dispatchWebhookEvents(input: { batchSize: number }): Promise<TDispatchPass> {
      const ctx = Context.current();
      const client = deps.temporal ?? ctx.client;
      const claimed = await claimEventsIntoDeliveries(deps.prisma, input.batchSize);
      const queued = await queuedDeliveries(deps.prisma, input.batchSize);
      for (const delivery of queued) {
        const args: [TWebhookDeliveryInput] = [{ deliveryId: delivery.id, round: delivery.round }];
        try {
          await client.workflow.start(WEBHOOK_DELIVERY_WORKFLOW_TYPE, {
            taskQueue: ctx.info.taskQueue,
            workflowId: webhookDeliveryWorkflowId(delivery.eventId, delivery.endpointId, delivery.round),
            workflowIdReusePolicy: 'REJECT_DUPLICATE',
            args,
          });
        } catch (err) {
          if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        }
        await markDeliveryStarted(deps.prisma, delivery);
      }
      return {
        eventsDispatched: claimed.events,
        deliveriesCreated: claimed.deliveries,
        deliveriesStarted: queued.length,
        more: claimed.events === input.batchSize || queued.length === input.batchSize,
      };
    },

    /** One HTTP attempt (attempt number from the workflow); records it and returns the next step. */
    async attemptWebhookDelivery(input: AttemptInput): Promise<AttemptReport> {
      try {
        return await attemptDelivery(attemptDeps, input);
      } catch (err) {
        if (err instanceof DeliveryGoneError) {
          throw ApplicationFailure.create({ type: WEBHOOK_FAILURE_TYPES.deliveryGone, message: err.message, nonRetryable: true });
        }
        if (err instanceof SigningSecretUnreadableError) {
          throw ApplicationFailure.create({ type: WEBHOOK_FAILURE_TYPES.secretUnreadable, message: err.message, nonRetryable: true });
        }
        throw err;
      }
    },

    async abandonWebhookDelivery(input: { deliveryId: string; round: number; reason: string }): Promise<void> {
      await abandonDelivery(deps.prisma, input);
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
