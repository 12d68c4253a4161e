import type { PrismaClient } from '../../db/client';
import { newId } from '../values/ids';
import { archivedError, loadEndpointRow, type EndpointRef } from './endpoints';
import { ApiError } from '../requests/errors';

/**
 * A test event for one endpoint, sent from the dashboard: a real signed delivery under the usual
 * policy, of an event named TEST_EVENT_NAME about the endpoint itself. It goes to that endpoint only
 * (written already dispatched, with its one delivery), is not in the event log (no scope reads
 * webhook endpoints) and is never recovered to another endpoint.
 */
export const TEST_EVENT_NAME = 'webhook_endpoint.test';
export const TEST_EVENT_RESOURCE_TYPE = 'webhook_endpoint';

export async function sendTestEvent(
  prisma: PrismaClient,
  ref: EndpointRef,
  apiVersion: string,
): Promise<{ eventId: string; deliveryId: string }> {
  const endpoint = await loadEndpointRow(prisma, ref);
  if (endpoint.status === 'archived') throw archivedError(endpoint.id);
  if (endpoint.status !== 'enabled')
    throw new ApiError('conflict', 'The endpoint is disabled: enable it to send a test event', { endpointId: endpoint.id });
  const eventId = newId('event');
  const deliveryId = newId('delivery');
  const now = new Date();
  await prisma.$transaction(async (tx) => {
    await tx.event.create({
      data: {
        id: eventId,
        appId: endpoint.appId,
        name: TEST_EVENT_NAME,
        apiVersion,
        accountId: null,
        resourceType: TEST_EVENT_RESOURCE_TYPE,
        resourceId: endpoint.id,
        payload: { endpointId: endpoint.id, message: 'A test event sent from the partner dashboard.' },
        createdAt: now,
        dispatchedAt: now,
      },
    });
    await tx.webhookDelivery.create({
      data: { id: deliveryId, appId: endpoint.appId, eventId, endpointId: endpoint.id, status: 'pending', round: 1, queuedAt: now },
    });
  });
  return { eventId, deliveryId };
}
