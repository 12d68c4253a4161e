import { ApiError } from '../../domain/requests/errors';
import { parseInput } from '../../domain/requests/validation';
import { dashboardApp } from '../../domain/dashboard/dashboard-reads';
import { getWebhookDelivery, listWebhookDeliveries, redeliverWebhook } from '../../domain/webhooks/deliveries';
import { ZWebhookDeliveryId, ZWebhookEndpointId } from '../../domain/webhooks/endpoint.schemas';
import {
  archiveWebhookEndpoint,
  createWebhookEndpoint,
  disableWebhookEndpoint,
  enableWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookEndpointSecret,
  updateWebhookEndpoint,
} from '../../domain/webhooks/endpoints';
import { recoverWebhookEndpoint } from '../../domain/webhooks/recovery';
import { sendTestEvent } from '../../domain/webhooks/test-event';
import { problemOf } from '../html-area';
import { ZCsrfOnly, ZSinceUtc } from './dashboard.schemas';
import * as views from './dashboard-views';
import type { Flash } from './dashboard-views';
import type { DashboardCtx, DashboardKit, DashboardRouter } from './kit';

/** The dashboard's webhook pages: endpoints (under the contract's rules), their actions, and deliveries. */
function endpointHelpers(kit: DashboardKit) {
  const { prisma, deps, viewerOf, send, redirect, member, can } = kit;
  const endpointRef = (ctx: DashboardCtx) => ({
    appId: member(ctx).appId,
    endpointId: parseInput(ZWebhookEndpointId, ctx.params.id, 'path'),
  });
  const endpointView = async (ctx: DashboardCtx, flash: Flash, status = 200) => {
    const ref = endpointRef(ctx);
    const endpoint = await getWebhookEndpoint(prisma, ref);
    const deliveries = await listWebhookDeliveries(prisma, deps.cursors, ref.appId, { endpointId: ref.endpointId, limit: '50' });
    await send(
      ctx,
      status,
      'Endpoint',
      views.endpointPage((await viewerOf(ctx))!, endpoint, deliveries.items, can(ctx, 'manage_webhooks'), flash),
      '/dashboard/webhooks',
    );
  };
  /** Runs a change; a refusal re-renders the page with the reason and its status, success redirects. */
  const change = async (
    ctx: DashboardCtx,
    done: string,
    rerender: (flash: Flash, status: number) => Promise<void>,
    run: () => Promise<unknown>,
  ) => {
    try {
      await run();
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500 || err.code === 'forbidden' || err.code === 'unsupported_media_type') throw err;
      return rerender({ error: problemOf(err) }, err.status);
    }
    redirect(ctx, `${ctx.path.replace(/\/(disable|enable|archive|test|recover)$/, '')}?done=${done}`);
  };
  return { endpointRef, endpointView, change };
}

/** List, add (the secret shown once), read and edit endpoints. */
export function registerEndpointPages(router: DashboardRouter, kit: DashboardKit): void {
  const { prisma, endpointDeps, viewerOf, send, signedIn, member, can, form, audit, noticeOf } = kit;
  const { endpointRef, endpointView, change } = endpointHelpers(kit);
  router.get('/webhooks', signedIn, async (ctx) => {
    const { items } = await listWebhookEndpoints(prisma, member(ctx).appId);
    await send(
      ctx,
      200,
      'Webhooks',
      views.endpointsPage((await viewerOf(ctx))!, items, can(ctx, 'manage_webhooks'), noticeOf(ctx)),
      '/dashboard/webhooks',
    );
  });
  router.post('/webhooks', signedIn, async (ctx) => {
    const { fields } = await form(ctx, ZCsrfOnly, 'manage_webhooks');
    const description = fields.get('description')?.trim();
    try {
      const created = await createWebhookEndpoint(endpointDeps, member(ctx).appId, {
        url: fields.get('url') ?? '',
        ...(description ? { description } : {}),
        events: fields.getAll('events'),
      });
      await audit(ctx, 'webhook_endpoint.created', created.endpoint.id);
      await send(
        ctx,
        201,
        'Endpoint added',
        views.secretPage(
          'Endpoint added',
          `The signing secret of ${created.endpoint.url}.`,
          created.signingSecret,
          `/dashboard/webhooks/${created.endpoint.id}`,
        ),
        '/dashboard/webhooks',
      );
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      const { items } = await listWebhookEndpoints(prisma, member(ctx).appId);
      await send(
        ctx,
        err.status,
        'Webhooks',
        views.endpointsPage((await viewerOf(ctx))!, items, true, { error: problemOf(err) }),
        '/dashboard/webhooks',
      );
    }
  });
  router.get('/webhooks/:id', signedIn, async (ctx) => endpointView(ctx, noticeOf(ctx)));
  router.post('/webhooks/:id', signedIn, async (ctx) => {
    const { fields } = await form(ctx, ZCsrfOnly, 'manage_webhooks');
    const description = fields.get('description')?.trim() ?? '';
    await change(
      ctx,
      'saved',
      (f, s) => endpointView(ctx, f, s),
      async () => {
        await updateWebhookEndpoint(prisma, endpointRef(ctx), {
          description: description === '' ? null : description,
          events: fields.getAll('events'),
        });
        await audit(ctx, 'webhook_endpoint.updated', endpointRef(ctx).endpointId);
      },
    );
  });
}

/** Disable, enable, archive, test, recover and rotate an endpoint. */
export function registerEndpointActions(router: DashboardRouter, kit: DashboardKit): void {
  const { prisma, endpointDeps, send, signedIn, member, form, audit, kick } = kit;
  const { endpointRef, endpointView, change } = endpointHelpers(kit);
  const simple: Array<[string, string, (ref: { appId: string; endpointId: string }) => Promise<unknown>]> = [
    ['disable', 'disabled', (ref) => disableWebhookEndpoint(prisma, ref)],
    ['enable', 'enabled', (ref) => enableWebhookEndpoint(prisma, ref)],
    ['archive', 'archived', (ref) => archiveWebhookEndpoint(prisma, ref)],
  ];
  for (const [action, done, run] of simple) {
    router.post(`/webhooks/:id/${action}`, signedIn, async (ctx) => {
      await form(ctx, ZCsrfOnly, 'manage_webhooks');
      await change(
        ctx,
        done,
        (f, s) => endpointView(ctx, f, s),
        async () => {
          await run(endpointRef(ctx));
          await audit(ctx, `webhook_endpoint.${done}`, endpointRef(ctx).endpointId);
        },
      );
    });
  }
  router.post('/webhooks/:id/test', signedIn, async (ctx) => {
    await form(ctx, ZCsrfOnly, 'manage_webhooks');
    const app = await dashboardApp(prisma, member(ctx).appId);
    await change(
      ctx,
      'tested',
      (f, s) => endpointView(ctx, f, s),
      async () => {
        const sent = await sendTestEvent(prisma, endpointRef(ctx), app.apiVersion);
        await audit(ctx, 'webhook_endpoint.test_sent', sent.deliveryId);
        await kick(ctx);
      },
    );
  });
  router.post('/webhooks/:id/recover', signedIn, async (ctx) => {
    const { fields } = await form(ctx, ZCsrfOnly, 'manage_webhooks');
    const since = ZSinceUtc.safeParse(fields.get('since') ?? '');
    if (!since.success) return endpointView(ctx, { error: 'since: a date and time (UTC)' }, 400);
    await change(
      ctx,
      'recovered',
      (f, s) => endpointView(ctx, f, s),
      async () => {
        const { recovery } = await recoverWebhookEndpoint(prisma, endpointRef(ctx), { since: since.data });
        await audit(ctx, `webhook_endpoint.recovered:${recovery.redelivered}+${recovery.newDeliveries}`, recovery.endpointId);
        await kick(ctx);
      },
    );
  });
  router.post('/webhooks/:id/rotate-secret', signedIn, async (ctx) => {
    await form(ctx, ZCsrfOnly, 'manage_webhooks');
    const rotated = await rotateWebhookEndpointSecret(endpointDeps, endpointRef(ctx));
    await audit(ctx, 'webhook_endpoint.secret_rotated', rotated.endpoint.id);
    await send(
      ctx,
      200,
      'Secret rotated',
      views.secretPage(
        'Secret rotated',
        `The new signing secret of ${rotated.endpoint.url}.`,
        rotated.signingSecret,
        `/dashboard/webhooks/${rotated.endpoint.id}`,
      ),
      '/dashboard/webhooks',
    );
  });
}

/** A delivery's attempts, and resending it. */
export function registerDeliveryPages(router: DashboardRouter, kit: DashboardKit): void {
  const { prisma, viewerOf, send, redirect, signedIn, member, can, form, audit, kick, noticeOf } = kit;
  const deliveryRef = (ctx: DashboardCtx) => ({
    appId: member(ctx).appId,
    deliveryId: parseInput(ZWebhookDeliveryId, ctx.params.id, 'path'),
  });
  const deliveryView = async (ctx: DashboardCtx, flash: Flash, status = 200) => {
    const { delivery, attempts } = await getWebhookDelivery(prisma, deliveryRef(ctx));
    await send(
      ctx,
      status,
      'Delivery',
      views.deliveryPage((await viewerOf(ctx))!, delivery, attempts, can(ctx, 'manage_webhooks'), flash),
      '/dashboard/webhooks',
    );
  };
  router.get('/deliveries/:id', signedIn, async (ctx) => deliveryView(ctx, noticeOf(ctx)));
  router.post('/deliveries/:id/resend', signedIn, async (ctx) => {
    await form(ctx, ZCsrfOnly, 'manage_webhooks');
    try {
      await redeliverWebhook(prisma, deliveryRef(ctx));
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      return deliveryView(ctx, { error: problemOf(err) }, err.status);
    }
    await audit(ctx, 'webhook_delivery.resent', deliveryRef(ctx).deliveryId);
    await kick(ctx);
    redirect(ctx, `/dashboard/deliveries/${deliveryRef(ctx).deliveryId}?done=resent`);
  });
}
