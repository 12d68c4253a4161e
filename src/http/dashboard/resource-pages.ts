import { atRest, dashboardApp, depositOf, resourceFinalityOf, timelineOf } from '../../domain/dashboard/dashboard-reads';
import { loadPayment, paymentResponseOf } from '../../domain/payments/payments';
import * as views from './dashboard-views';
import { liveFinality } from './live-finality';
import type { DashboardKit, DashboardRouter } from './kit';

/**
 * A Payment's and a deposit's page (read-only: its API representation, timeline and finality bars),
 * and what the page's script reads again while its bars can still move.
 */
export function registerResourcePages(router: DashboardRouter, kit: DashboardKit): void {
  const { prisma, deps, send, signedIn, member } = kit;
  const finality = { prisma, environments: deps.environments };
  router.get('/payments/:id', signedIn, async (ctx) => {
    const app = await dashboardApp(prisma, member(ctx).appId);
    const id = String(ctx.params.id).slice(0, 64);
    const row = await loadPayment(prisma, app.id, id);
    const view = await paymentResponseOf(finality, row);
    const onChain = liveFinality(view.payment.finality, atRest('payment', row.status));
    await send(
      ctx,
      200,
      `Payment ${id}`,
      views.resourcePage(`Payment ${id}`, view, await timelineOf(prisma, app, id), {
        state: onChain,
        url: `/dashboard/payments/${id}/finality`,
      }),
      '/dashboard/payments',
      onChain.live ? kit.finalityScript.url : undefined,
    );
  });
  router.get('/deposits/:id', signedIn, async (ctx) => {
    const app = await dashboardApp(prisma, member(ctx).appId);
    const id = String(ctx.params.id).slice(0, 64);
    const view = await depositOf(finality, app, id);
    const onChain = liveFinality(view.finality, atRest('deposit', view.status));
    await send(
      ctx,
      200,
      `Deposit ${id}`,
      views.resourcePage(`Deposit ${id}`, { deposit: view }, await timelineOf(prisma, app, id), {
        state: onChain,
        url: `/dashboard/deposits/${id}/finality`,
      }),
      '/dashboard/deposits',
      onChain.live ? kit.finalityScript.url : undefined,
    );
  });
  // What a resource page's script reads again while its bars can move (JSON: ZLiveFinality).
  for (const kind of ['payment', 'deposit'] as const) {
    router.get(`/${kind}s/:id/finality`, signedIn, async (ctx) => {
      const app = await dashboardApp(prisma, member(ctx).appId);
      const read = await resourceFinalityOf(finality, app, { kind, id: String(ctx.params.id) });
      ctx.body = liveFinality(read.finality, read.atRest);
    });
  }
}
