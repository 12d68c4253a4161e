import { dashboardApp, recentDeposits } from '../../domain/dashboard/dashboard-reads';
import { listPartnerActions } from '../../domain/dashboard/partner-actions';
import { recentRequests } from '../../domain/dashboard/request-log';
import { getEvent, listEvents } from '../../domain/event-log/event-log';
import { ZListEventsQuery } from '../../domain/event-log/event-log.schemas';
import { listPayments } from '../../domain/payments/payments';
import { ZListPaymentsQuery } from '../../domain/payments/payment.schemas';
import { parseInput } from '../../domain/requests/validation';
import { ZEventsFilter } from './dashboard.schemas';
import * as views from './dashboard-views';
import type { DashboardKit, DashboardRouter } from './kit';

/** The read-only pages: overview, events, the lists of Payments and deposits, the request log and the audit. */
export function registerReadPages(router: DashboardRouter, kit: DashboardKit): void {
  const { prisma, deps, viewerOf, send, signedIn, member } = kit;
  const finality = { prisma, environments: deps.environments };
  router.get('/', signedIn, async (ctx) => {
    const appId = member(ctx).appId;
    const [app, endpoints, payments, deposits] = await Promise.all([
      dashboardApp(prisma, appId),
      prisma.webhookEndpoint.count({ where: { appId, status: { not: 'archived' } } }),
      prisma.payment.count({ where: { appId } }),
      prisma.deposit.count({ where: { appId } }),
    ]);
    await send(ctx, 200, 'Overview', views.overviewPage((await viewerOf(ctx))!, app, { endpoints, payments, deposits }), '/dashboard');
  });
  router.get('/events', signedIn, async (ctx) => {
    const filter = parseInput(ZEventsFilter, ctx.query, 'query');
    const present = Object.fromEntries(Object.entries(filter).filter(([, v]) => typeof v === 'string' && v.trim() !== '')) as Record<
      string,
      string
    >;
    const query = parseInput(ZListEventsQuery, { ...present, limit: '50' }, 'query');
    const app = await dashboardApp(prisma, member(ctx).appId);
    const list = await listEvents(prisma, app, query, deps.cursors);
    const next = list.nextCursor ? `/dashboard/events?${new URLSearchParams({ ...present, cursor: list.nextCursor }).toString()}` : null;
    await send(ctx, 200, 'Events', views.eventsPage(list.data, present, next), '/dashboard/events');
  });
  router.get('/events/:id', signedIn, async (ctx) => {
    const app = await dashboardApp(prisma, member(ctx).appId);
    await send(ctx, 200, 'Event', views.eventPage(await getEvent(prisma, app, String(ctx.params.id).slice(0, 64))), '/dashboard/events');
  });
  router.get('/payments', signedIn, async (ctx) => {
    const app = await dashboardApp(prisma, member(ctx).appId);
    const list = await listPayments(finality, app, parseInput(ZListPaymentsQuery, { limit: '50' }, 'query'), deps.cursors);
    const rows = list.data.map((p) => ({
      id: p.id,
      status: p.status,
      amount: `${p.paymentAmount.amount} ${p.paymentAmount.assetCode}`,
      createdAt: p.createdAt,
    }));
    await send(ctx, 200, 'Payments', views.resourceListPage('Payments', '/dashboard/payments', rows), '/dashboard/payments');
  });
  router.get('/deposits', signedIn, async (ctx) => {
    const app = await dashboardApp(prisma, member(ctx).appId);
    const rows = await recentDeposits(prisma, app);
    await send(ctx, 200, 'Deposits', views.resourceListPage('Deposits', '/dashboard/deposits', rows), '/dashboard/deposits');
  });
  router.get('/requests', signedIn, async (ctx) => {
    await send(ctx, 200, 'Request log', views.requestsPage(await recentRequests(prisma, member(ctx).appId)), '/dashboard/requests');
  });
  router.get('/audit', signedIn, async (ctx) => {
    await send(ctx, 200, 'Audit', views.auditPage(await listPartnerActions(prisma, member(ctx).appId)), '/dashboard/audit');
  });
}
