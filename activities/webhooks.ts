import { ApplicationFailure } from '@temporalio/common';
import type { PrismaClient } from '../src/db/client';
import type { Logger } from '../src/logger';
import { abandonDelivery, attemptDelivery, DeliveryGoneError, type AttemptInput, type AttemptReport } from '../src/domain/webhooks/attempt';
import type { DestinationPolicy } from '../src/webhooks/destination';
import { claimEventsIntoDeliveries, markDeliveriesStarted, queuedDeliveries } from '../src/domain/webhooks/dispatch';
import { SigningSecretUnreadableError } from '../src/domain/webhooks/signing-secrets';
import type { WebhookEngine } from '../src/domain/engine/pure/engine';
import { WEBHOOK_FAILURES, type DispatchPass } from '../workflows/contracts/webhooks';
import type { ServiceSecret } from '../src/domain/keys/service-keys';

export interface WebhookActivityDeps {
  prisma: PrismaClient;
  logger: Logger;
  /** Decrypts endpoint signing secrets; the same SERVICE_SECRET the API encrypted them with. */
  serviceSecret: ServiceSecret;
  /** Re-checked at every attempt (DNS rebinding). Absent means the spec's default: private refused. */
  destinations?: DestinationPolicy;
  /** Starts delivery workflows. */
  engine: Pick<WebhookEngine, 'startWebhookDelivery'>;
  http?: { timeoutMs?: number; maxResponseBytes?: number };
  /** Tests only: see WebhookAttemptDeps.retryBackoffMs. */
  retryBackoffMs?: () => readonly number[];
  /** The environments whose apps get deliveries (the webhooks module's, webhooks-module.ts); absent: every one. */
  deliversIn?: readonly string[];
}

export const WEBHOOK_HTTP_TIMEOUT_MS = 10_000;

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
    ...(deps.retryBackoffMs ? { retryBackoffMs: deps.retryBackoffMs } : {}),
  };

  return {
    /**
     * One dispatcher pass: events -> queued deliveries (one transaction), then a workflow per queued
     * delivery. Deterministic workflow ids: a retried pass (or an overlapping one) finds the workflow
     * already there, running or finished, and counts it as started. The starts go out together (not
     * one round trip after another), and the queue marks of those that started clear in one statement;
     * a start that failed stays queued and fails the pass, so its retry starts it.
     */
    async dispatchWebhookEvents(input: { batchSize: number }): Promise<DispatchPass> {
      const claimed = await claimEventsIntoDeliveries(deps.prisma, input.batchSize, deps.deliversIn);
      const queued = await queuedDeliveries(deps.prisma, input.batchSize);
      const starts = await Promise.allSettled(
        queued.map((d) =>
          deps.engine.startWebhookDelivery({ deliveryId: d.id, eventId: d.eventId, endpointId: d.endpointId, round: d.round }),
        ),
      );
      await markDeliveriesStarted(
        deps.prisma,
        queued.filter((_, i) => starts[i]!.status === 'fulfilled'),
      );
      const failed = starts.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) throw failed.reason;
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
          throw ApplicationFailure.create({ type: WEBHOOK_FAILURES.deliveryGone, message: err.message, nonRetryable: true });
        }
        if (err instanceof SigningSecretUnreadableError) {
          throw ApplicationFailure.create({ type: WEBHOOK_FAILURES.secretUnreadable, message: err.message, nonRetryable: true });
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
