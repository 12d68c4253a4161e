import type { Prisma, PrismaClient } from '../../db/client';
import { ApiError, notFound } from '../requests/errors';
import { afterPosition, pageOf, type CursorCodec } from '../requests/pagination';
import { parseInput } from '../requests/validation';
import { ZListWebhookDeliveries, type WebhookAttemptView, type WebhookDeliveryView, type WebhookDeliveryStatus } from './endpoint.schemas';

/** Delivery history (read by operators through the CLI and the admin API) and redelivery. */

const DELIVERY_INCLUDE = { event: { select: { name: true } } } as const;
type DeliveryRow = Prisma.WebhookDeliveryGetPayload<{ include: typeof DELIVERY_INCLUDE }>;
type AttemptRow = Prisma.WebhookAttemptGetPayload<object>;

export function toWebhookDelivery(row: DeliveryRow): WebhookDeliveryView {
  return {
    id: row.id,
    appId: row.appId,
    eventId: row.eventId,
    eventName: row.event.name,
    endpointId: row.endpointId,
    status: row.status as WebhookDeliveryStatus,
    round: row.round,
    attemptCount: row.attemptCount,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    completedAt: row.completedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toWebhookAttempt(row: AttemptRow): WebhookAttemptView {
  return {
    deliveryId: row.deliveryId,
    round: row.round,
    attempt: row.attempt,
    state: row.state as WebhookAttemptView['state'],
    url: row.url,
    startedAt: row.claimedAt.toISOString(),
    completedAt: row.completedAt?.toISOString() ?? null,
    responseStatus: row.responseStatus,
    latencyMs: row.latencyMs,
    responseBody: row.responseBody,
    error: row.error,
    outcome: row.outcome as WebhookAttemptView['outcome'],
    nextDelayMs: row.nextDelayMs,
  };
}

export interface DeliveryRef {
  deliveryId: string;
  appId?: string;
}

export async function listWebhookDeliveries(
  prisma: PrismaClient,
  cursors: CursorCodec,
  appId: string,
  rawQuery: unknown,
): Promise<{ items: WebhookDeliveryView[]; nextCursor: string | null }> {
  const query = parseInput(ZListWebhookDeliveries, rawQuery, 'query');
  const app = appId.length <= 64 ? await prisma.app.findUnique({ where: { id: appId }, select: { id: true } }) : null;
  if (!app) throw notFound('App');
  const scope = `webhook-deliveries:${appId}:${query.endpointId ?? ''}:${query.status ?? ''}`;
  const position = query.cursor ? cursors.decode(scope, query.cursor) : undefined;
  const rows = await prisma.webhookDelivery.findMany({
    where: {
      appId,
      ...(query.endpointId ? { endpointId: query.endpointId } : {}),
      ...(query.status ? { status: query.status } : {}),
      ...afterPosition(position),
    },
    include: DELIVERY_INCLUDE,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: query.limit + 1,
  });
  const page = pageOf(rows, query.limit, cursors, scope);
  return { items: page.items.map(toWebhookDelivery), nextCursor: page.nextCursor };
}

async function loadDeliveryRow(prisma: PrismaClient, ref: DeliveryRef): Promise<DeliveryRow> {
  const row =
    ref.deliveryId.length <= 64
      ? await prisma.webhookDelivery.findUnique({ where: { id: ref.deliveryId }, include: DELIVERY_INCLUDE })
      : null;
  if (!row || (ref.appId !== undefined && row.appId !== ref.appId)) throw notFound('Webhook delivery');
  return row;
}

/** A delivery and every attempt of every round, oldest first. */
export async function getWebhookDelivery(
  prisma: PrismaClient,
  ref: DeliveryRef,
): Promise<{ delivery: WebhookDeliveryView; attempts: WebhookAttemptView[] }> {
  const row = await loadDeliveryRow(prisma, ref);
  const attempts = await prisma.webhookAttempt.findMany({
    where: { deliveryId: row.id },
    orderBy: [{ round: 'asc' }, { attempt: 'asc' }],
  });
  return { delivery: toWebhookDelivery(row), attempts: attempts.map(toWebhookAttempt) };
}

/**
 * Queues an abandoned delivery for another round of (up to 3) attempts, under the same delivery id.
 * The dispatcher starts the round's workflow (id `webhook-delivery:<event>:<endpoint>:redelivery-<n>`).
 */
export async function redeliverWebhook(prisma: PrismaClient, ref: DeliveryRef): Promise<{ delivery: WebhookDeliveryView }> {
  const row = await loadDeliveryRow(prisma, ref);
  const endpoint = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: row.endpointId }, select: { status: true } });
  if (endpoint.status === 'archived') {
    throw new ApiError('webhook_endpoint_archived', 'The endpoint of this delivery is archived', { endpointId: row.endpointId });
  }
  if (endpoint.status !== 'enabled') {
    throw new ApiError('conflict', 'The endpoint of this delivery is disabled: enable it before redelivering', {
      endpointId: row.endpointId,
    });
  }
  const notAbandoned = () =>
    new ApiError('webhook_delivery_not_abandoned', 'Only an abandoned delivery can be redelivered', { status: row.status });
  if (row.status !== 'abandoned') throw notAbandoned();
  const { count } = await prisma.webhookDelivery.updateMany({
    where: { id: row.id, status: 'abandoned', round: row.round },
    data: { status: 'pending', round: row.round + 1, queuedAt: new Date(), nextAttemptAt: null, completedAt: null },
  });
  if (count === 0) throw notAbandoned();
  return { delivery: toWebhookDelivery(await loadDeliveryRow(prisma, ref)) };
}
