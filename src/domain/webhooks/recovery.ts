import { TEST_EVENT_RESOURCE_TYPE } from './test-event';
import type { PrismaClient } from '../../db/client';
import { ApiError } from '../requests/errors';
import { newId } from '../values/ids';
import { parseInput } from '../requests/validation';
import { RECOVERY_WINDOW_DAYS, ZRecoverWebhookEndpoint } from './endpoint.schemas';
import { archivedError, loadEndpointRow, type EndpointRef } from './endpoints';

export interface EndpointRecovery {
  endpointId: string;
  since: string;
  /** Abandoned deliveries queued for another round of (up to 3) attempts, under their delivery ids. */
  redelivered: number;
  /** Subscribed events the endpoint never had a delivery for (it was disabled), now queued. */
  newDeliveries: number;
}

const DAY_MS = 86_400_000;

/**
 * Recovers an endpoint: every subscribed event since a time that it did not receive is delivered
 * again under the delivery policy. An abandoned delivery gets a new round; an event created while
 * the endpoint was disabled gets its first delivery. Delivered events and deliveries still trying are
 * left alone (the event log has them). One transaction; the dispatcher starts the workflows.
 */
export async function recoverWebhookEndpoint(
  prisma: PrismaClient,
  ref: EndpointRef,
  rawInput: unknown,
  now = new Date(),
): Promise<{ recovery: EndpointRecovery }> {
  const since = new Date(parseInput(ZRecoverWebhookEndpoint, rawInput ?? {}, 'body').since);
  assertWithinWindow(since, now);
  const endpoint = await loadEndpointRow(prisma, ref);
  if (endpoint.status === 'archived') throw archivedError(endpoint.id);
  if (endpoint.status !== 'enabled') {
    throw new ApiError('conflict', 'The endpoint is disabled: enable it before recovering', { endpointId: endpoint.id });
  }
  // An endpoint receives events that happen after it was created.
  const from = since > endpoint.createdAt ? since : endpoint.createdAt;
  return prisma.$transaction(async (tx) => {
    const queuedAt = new Date();
    const redelivered = await tx.webhookDelivery.updateMany({
      where: { endpointId: endpoint.id, status: 'abandoned', event: { createdAt: { gte: from } } },
      data: { status: 'pending', round: { increment: 1 }, queuedAt, nextAttemptAt: null, completedAt: null },
    });
    // Undispatched events are the dispatcher's: it makes their deliveries as usual.
    const missed = await tx.event.findMany({
      where: {
        appId: endpoint.appId,
        createdAt: { gte: from },
        dispatchedAt: { not: null },
        // A test event is its own endpoint's only.
        resourceType: { not: TEST_EVENT_RESOURCE_TYPE },
        ...(endpoint.events.length > 0 ? { name: { in: endpoint.events } } : {}),
        webhookDeliveries: { none: { endpointId: endpoint.id } },
      },
      select: { id: true },
    });
    const rows = missed.map((e) => ({
      id: newId('delivery'),
      appId: endpoint.appId,
      eventId: e.id,
      endpointId: endpoint.id,
      status: 'pending',
      round: 1,
      queuedAt,
    }));
    const created = rows.length > 0 ? await tx.webhookDelivery.createMany({ data: rows, skipDuplicates: true }) : { count: 0 };
    return {
      recovery: { endpointId: endpoint.id, since: since.toISOString(), redelivered: redelivered.count, newDeliveries: created.count },
    };
  });
}

function assertWithinWindow(since: Date, now: Date): void {
  const refuse = (message: string) => new ApiError('bad_request', message, { fields: [{ field: 'body.since', message }] });
  if (since.getTime() > now.getTime()) throw refuse('since is in the future');
  if (since.getTime() < now.getTime() - RECOVERY_WINDOW_DAYS * DAY_MS)
    throw refuse(`since reaches back at most ${RECOVERY_WINDOW_DAYS} days`);
}
