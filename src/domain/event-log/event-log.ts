import type { Prisma, PrismaClient } from '../../db/client';
import { assertScope, type AuthenticatedApp, type Scope } from '../apps/apps';
import { notFound } from '../requests/errors';
import { afterPosition, pageOf, type CursorCodec } from '../requests/pagination';
import { EVENT_RESOURCE_TYPES, type TEvent, type TEventList, type TListEventsQuery } from './event-log.schemas';

type EventResourceType = (typeof EVENT_RESOURCE_TYPES)[number];

/** The scope that reads a resource type's events: the scope that reads the resource itself. */
const SCOPE_OF: Record<EventResourceType, Scope> = {
  account: 'v2:accounts',
  payment: 'v2:payments',
  deposit: 'v2:deposit_addresses',
  vault: 'v2:vaults',
};

/** The resource types whose events this credential may read. */
export function readableResourceTypes(scopes: readonly Scope[]): EventResourceType[] {
  return EVENT_RESOURCE_TYPES.filter((t) => scopes.includes(SCOPE_OF[t]));
}

type EventRow = Prisma.EventGetPayload<object>;

function toEventView(e: EventRow): TEvent {
  return {
    id: e.id,
    name: e.name,
    apiVersion: e.apiVersion,
    createdAt: e.createdAt.toISOString(),
    resourceSequence: Number(e.resourceSequence),
    payload: e.payload as Record<string, unknown>,
    resourceType: e.resourceType as EventResourceType,
    resourceId: e.resourceId,
    accountId: e.accountId,
  };
}

/**
 * The app's events, newest first, as they were committed (and delivered). Events are never deleted,
 * so a consumer can go back as far as its app's first event; a list holds only the resource types the
 * credential's scopes read.
 */
export async function listEvents(
  prisma: PrismaClient,
  app: AuthenticatedApp,
  query: TListEventsQuery,
  cursors: CursorCodec,
): Promise<TEventList> {
  const types = readableResourceTypes(app.scopes);
  const filters: Prisma.EventWhereInput = {
    appId: app.id,
    // Always named: the service's own events (a dashboard test event) are no resource a scope reads.
    resourceType: { in: types },
    ...(query.name ? { name: query.name } : {}),
    ...(query.resourceId ? { resourceId: query.resourceId } : {}),
    ...(query.createdFrom || query.createdTo
      ? {
          createdAt: {
            ...(query.createdFrom ? { gte: new Date(query.createdFrom) } : {}),
            ...(query.createdTo ? { lt: new Date(query.createdTo) } : {}),
          },
        }
      : {}),
  };
  // The cursor is bound to the filters, so it can't be replayed against another list.
  const scope = ['events', app.id, query.name, query.resourceId, query.createdFrom, query.createdTo].map((v) => v ?? '').join(':');
  const position = query.cursor ? cursors.decode(scope, query.cursor) : undefined;
  const rows = await prisma.event.findMany({
    where: { AND: [filters, afterPosition(position)] },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: query.limit + 1,
  });
  const page = pageOf(rows, query.limit, cursors, scope);
  return { data: page.items.map(toEventView), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
}

/** One of the app's events; another app's event is not found, one outside the credential's scopes is 403. */
export async function getEvent(prisma: PrismaClient, app: AuthenticatedApp, eventId: string): Promise<TEvent> {
  const e = await prisma.event.findFirst({ where: { id: eventId, appId: app.id, resourceType: { in: [...EVENT_RESOURCE_TYPES] } } });
  if (!e) throw notFound('Event');
  assertScope(app, SCOPE_OF[e.resourceType as EventResourceType]);
  return toEventView(e);
}
