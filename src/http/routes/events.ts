import type { PrismaClient } from '../../db/client';
import { getEvent, listEvents } from '../../domain/event-log/event-log';
import { ZEventPath, ZListEventsQuery } from '../../domain/event-log/event-log.schemas';
import type { CursorCodec } from '../../domain/requests/pagination';
import { parseInput } from '../../domain/requests/validation';
import { requireApp, type ApiRouter } from '../context';

/** The event log: what webhooks delivered, readable and replayable by the partner (src/domain/event-log). */
export function registerEventRoutes(router: ApiRouter, deps: { prisma: PrismaClient; cursors: CursorCodec }): void {
  const { prisma, cursors } = deps;

  router.get('/v2/events', async (ctx) => {
    const query = parseInput(ZListEventsQuery, ctx.query, 'query');
    ctx.body = await listEvents(prisma, requireApp(ctx), query, cursors);
  });

  router.get('/v2/events/:eventId', async (ctx) => {
    const { eventId } = parseInput(ZEventPath, ctx.params, 'path');
    ctx.body = await getEvent(prisma, requireApp(ctx), eventId);
  });
}
