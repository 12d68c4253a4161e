import type { Prisma, PrismaClient } from '../../db/client';
import { newId } from '../values/ids';

/**
 * The outbox side of the dispatcher. One transaction claims the oldest undispatched events (FOR UPDATE:
 * an overlapping pass, e.g. a retried activity whose first execution still runs, waits for this one and
 * then finds those rows dispatched, so a pass that returns has seen everything committed before it
 * started), writes one webhook_deliveries row per
 * subscribed, enabled endpoint of the event's app (queued for a workflow start), and marks the events
 * dispatched. A crash before the commit leaves the events undispatched; after it, the deliveries are
 * queued: either way nothing is lost and nothing is created twice (unique (event, endpoint)).
 */
export async function claimEventsIntoDeliveries(
  prisma: PrismaClient,
  limit: number,
  /** The environments whose apps get deliveries (webhooks-module.ts); absent: every one. Others' events are dispatched to no endpoint. */
  deliversIn?: readonly string[],
): Promise<{ events: number; deliveries: number }> {
  return prisma.$transaction(async (tx) => {
    const events = await tx.$queryRaw<Array<{ id: string; app_id: string; name: string; created_at: Date }>>`
      SELECT id, app_id, name, created_at FROM events
      WHERE dispatched_at IS NULL
      ORDER BY sequence
      LIMIT ${limit}
      FOR UPDATE`;
    if (events.length === 0) return { events: 0, deliveries: 0 };
    const appIds = await deliveringApps(tx, [...new Set(events.map((e) => e.app_id))], deliversIn);
    const endpoints = await tx.webhookEndpoint.findMany({
      where: { appId: { in: appIds }, status: 'enabled' },
      select: { id: true, appId: true, events: true, createdAt: true },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    const now = new Date();
    const rows = events.flatMap((event) =>
      endpoints
        .filter(
          (ep) =>
            ep.appId === event.app_id &&
            // An endpoint receives events that happen after it was created.
            ep.createdAt.getTime() <= event.created_at.getTime() &&
            (ep.events.length === 0 || ep.events.includes(event.name)),
        )
        .map((ep) => ({
          id: newId('delivery'),
          appId: event.app_id,
          eventId: event.id,
          endpointId: ep.id,
          status: 'pending',
          round: 1,
          queuedAt: now,
        })),
    );
    const created = rows.length > 0 ? await tx.webhookDelivery.createMany({ data: rows, skipDuplicates: true }) : { count: 0 };
    await tx.event.updateMany({ where: { id: { in: events.map((e) => e.id) } }, data: { dispatchedAt: now } });
    return { events: events.length, deliveries: created.count };
  });
}

/** Of `appIds`, those whose environment gets deliveries. */
export async function deliveringApps(tx: Prisma.TransactionClient, appIds: string[], deliversIn?: readonly string[]): Promise<string[]> {
  if (!deliversIn) return appIds;
  const apps = await tx.app.findMany({ where: { id: { in: appIds }, environment: { in: [...deliversIn] } }, select: { id: true } });
  return apps.map((a) => a.id);
}

export interface QueuedDelivery {
  id: string;
  eventId: string;
  endpointId: string;
  round: number;
}

/** Deliveries whose workflow for the current round still has to be started, oldest first. */
export async function queuedDeliveries(prisma: PrismaClient, limit: number): Promise<QueuedDelivery[]> {
  return prisma.webhookDelivery.findMany({
    where: { queuedAt: { not: null } },
    orderBy: [{ queuedAt: 'asc' }, { id: 'asc' }],
    take: limit,
    select: { id: true, eventId: true, endpointId: true, round: true },
  });
}

/** These rounds' workflows exist; only each one's own round's queue mark is cleared (one statement). */
export async function markDeliveriesStarted(prisma: PrismaClient, deliveries: QueuedDelivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  await prisma.webhookDelivery.updateMany({
    where: { OR: deliveries.map((d) => ({ id: d.id, round: d.round })), queuedAt: { not: null } },
    data: { queuedAt: null },
  });
}
