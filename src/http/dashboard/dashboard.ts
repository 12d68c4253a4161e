import type Koa from 'koa';
import Router from '@koa/router';
import type { z } from 'zod';
import type { ServiceConfig } from '../../config';
import type { PrismaClient } from '../../db/client';
import type { Mailer } from '../../mail/mailer';
import type { WebhookEngine } from '../../domain/engine';
import { ApiError } from '../../domain/errors';
import type { CursorCodec } from '../../domain/pagination';
import { parseInput } from '../../domain/validation';
import type { ServiceSecret } from '../../domain/service-keys';
import { dashboardApp, depositOf, recentDeposits, timelineOf } from '../../domain/dashboard/dashboard-reads';
import { listPartnerActions, recordPartnerAction } from '../../domain/dashboard/partner-actions';
import { partnerSessionStore, type PartnerSessionUser } from '../../domain/dashboard/partner-sessions';
import { forbiddenFor, membershipsOf, roleAllows, type PartnerPermission } from '../../domain/dashboard/partner-users';
import { recentRequests } from '../../domain/dashboard/request-log';
import { redeemSignInCode, requestSignInCode } from '../../domain/dashboard/sign-in';
import { getEvent, listEvents } from '../../domain/event-log/event-log';
import { ZListEventsQuery } from '../../domain/event-log/event-log.schemas';
import { loadPayment, listPayments, paymentResponse } from '../../domain/payments/payments';
import { ZListPaymentsQuery } from '../../domain/payments/payment.schemas';
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
  type WebhookEndpointDeps,
} from '../../domain/webhooks/endpoints';
import { recoverWebhookEndpoint } from '../../domain/webhooks/recovery';
import { sendTestEvent } from '../../domain/webhooks/test-event';
import { revokeApp, rotateAppSecret } from '../../domain/app-credentials';
import type { ApiContext, ApiState } from '../context';
import { htmlAreaGuard, problemOf, readForm } from '../html-area';
import { CONSOLE_CSS } from '../console/console-views';
import { sealedCookies, type CookieSession } from '../sealed-cookies';
import { ZCsrfOnly, ZEventsFilter, ZRevokeForm, ZRotateForm, ZSignInCode, ZSignInEmail, ZSinceUtc, ZSwitchApp } from './dashboard.schemas';
import * as views from './dashboard-views';
import type { Flash, Viewer } from './dashboard-views';
import type { Html } from '../html';

/**
 * The partner dashboard (docs/decisions.md "Partner dashboard"): server-rendered pages under
 * /dashboard where a partner's users, invited by an operator, sign in with an emailed code and manage
 * their app environment's webhook endpoints, read its deliveries, events, Payments, deposits and
 * request log, and (admins) rotate or revoke its secret. Every change goes through the same domain
 * functions as the admin API and is written to the partner audit with who did it.
 */
export interface DashboardDeps {
  config: ServiceConfig;
  prisma: PrismaClient;
  serviceSecret: ServiceSecret;
  mailer: Mailer | null;
  cursors: CursorCodec;
  engine?: Pick<WebhookEngine, 'kickWebhookDispatcher'>;
}

export const DASHBOARD_SESSION_SECONDS = 8 * 3600;

type State = ApiState & { member?: PartnerSessionUser; session?: CookieSession };
type Ctx = ApiContext & { state: State };


const NOTICES: Record<string, string> = {
  created: 'Endpoint added.',
  saved: 'Changes saved.',
  disabled: 'Endpoint disabled.',
  enabled: 'Endpoint enabled.',
  archived: 'Endpoint archived.',
  tested: 'Test event sent: its delivery is below.',
  recovered: 'Recovery started: the missed events are being delivered again.',
  resent: 'Delivery queued to be sent again.',
};

export function registerPartnerDashboard(app: Koa<ApiState>, deps: DashboardDeps): void {
  const { prisma } = deps;
  const store = partnerSessionStore(prisma);
  const cookies = sealedCookies({
    path: '/dashboard',
    sessionCookie: 'pp_dashboard',
    label: 'dashboard-session',
    serviceSecret: deps.serviceSecret,
    secureCookies: deps.config.http.publicBaseUrl.startsWith('https:'),
  });
  const endpointDeps: WebhookEndpointDeps = { prisma, serviceSecret: deps.serviceSecret, destinations: deps.config.webhooks };
  const signIn = { prisma, serviceSecret: deps.serviceSecret, mailer: deps.mailer };
  const router = new Router<State>({ prefix: '/dashboard' });

  const viewerOf = async (ctx: Ctx): Promise<Viewer | null> => {
    const m = ctx.state.member;
    if (!m || !ctx.state.session) return null;
    const others = (await membershipsOf(prisma, m.email)).filter((u) => u.appId !== m.appId).map((u) => u.appId);
    return { email: m.email, role: m.role, appId: m.appId, environment: m.environment, csrf: ctx.state.session.csrf, otherApps: others };
  };
  const send = async (ctx: Ctx, status: number, title: string, body: Html, current = '') => {
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = views.page(title, await viewerOf(ctx), body, current);
  };
  const redirect = (ctx: Ctx, to: string) => {
    ctx.status = 303;
    ctx.redirect(to);
  };

  router.use(htmlAreaGuard('partner dashboard', (ctx, status, problem) => send(ctx as Ctx, status, 'Error', views.messagePage(status === 404 ? 'Not found' : 'Request refused', problem))));

  const signedIn = async (ctx: Ctx, next: () => Promise<unknown>) => {
    const session = cookies.read(ctx);
    const member = session ? await store.live(session.id) : null;
    if (!session || !member) {
      if (ctx.method === 'GET') return redirect(ctx, '/dashboard/login');
      throw new ApiError('unauthorized', 'Sign in first: your session has ended.');
    }
    ctx.state.session = session;
    ctx.state.member = member;
    return next();
  };
  const member = (ctx: Ctx) => ctx.state.member!;
  const can = (ctx: Ctx, permission: PartnerPermission) => roleAllows(member(ctx).role, permission);
  /** A signed-in member's form: its CSRF token must be the session's, and the role must allow it. */
  const form = async <T extends z.ZodType>(ctx: Ctx, schema: T, permission: PartnerPermission): Promise<{ input: z.output<T>; fields: URLSearchParams }> => {
    const fields = await readForm(ctx);
    if (!cookies.csrfMatches(ctx.state.session!, fields.get('_csrf') ?? '')) {
      throw new ApiError('forbidden', 'The form has expired or did not come from this dashboard: reload the page and try again.');
    }
    if (!can(ctx, permission)) throw forbiddenFor(member(ctx).role);
    return { input: parseInput(schema, Object.fromEntries(fields), 'body'), fields };
  };
  const audit = (ctx: Ctx, action: string, target?: string) =>
    recordPartnerAction(prisma, { appId: member(ctx).appId, actor: member(ctx).email, action, ...(target ? { target } : {}) });
  const kick = async (ctx: Ctx) => {
    if (deps.engine) await deps.engine.kickWebhookDispatcher().catch((err: unknown) => ctx.state.log.warn({ err }, 'could not kick the webhook dispatcher'));
  };
  const noticeOf = (ctx: Ctx): Flash => {
    const done = typeof ctx.query.done === 'string' ? NOTICES[ctx.query.done] : undefined;
    return done ? { notice: done } : {};
  };

  router.get('/assets/dashboard.css', (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.type = 'text/css; charset=utf-8';
    ctx.body = CONSOLE_CSS;
  });

  registerSignIn();
  registerWebhookPages();
  registerReadPages();
  registerCredentialPages();

  function registerSignIn() {
    router.get('/login', async (ctx) => {
      await send(ctx, 200, 'Sign in', views.signInPage(cookies.loginCsrf(ctx), {}));
    });
    router.post('/login', async (ctx) => {
      const fields = Object.fromEntries(await readForm(ctx));
      if (!cookies.loginCsrfMatches(ctx, fields._csrf ?? '')) return send(ctx, 403, 'Sign in', views.signInPage(cookies.loginCsrf(ctx), { error: 'The sign-in form expired: try again.' }));
      const parsed = ZSignInEmail.safeParse(fields);
      if (!parsed.success) return send(ctx, 400, 'Sign in', views.signInPage(cookies.loginCsrf(ctx), { error: 'Enter an email address.' }));
      const outcome = await requestSignInCode(signIn, parsed.data.email);
      // The page is the same whatever happened: it must not tell who has access.
      if (outcome !== 'sent') ctx.state.log.warn({ outcome }, 'partner dashboard sign-in code not sent');
      await send(ctx, 200, 'Enter your code', views.codePage(cookies.loginCsrf(ctx), parsed.data.email, {}));
    });
    router.post('/login/code', async (ctx) => {
      const fields = Object.fromEntries(await readForm(ctx));
      const refuse = (status: number, email: string, error: string) => send(ctx, status, 'Enter your code', views.codePage(cookies.loginCsrf(ctx), email, { error }));
      const parsed = ZSignInCode.safeParse(fields);
      if (!parsed.success) return send(ctx, 400, 'Sign in', views.signInPage(cookies.loginCsrf(ctx), { error: 'Start again: enter your email.' }));
      if (!cookies.loginCsrfMatches(ctx, parsed.data._csrf)) return refuse(403, parsed.data.email, 'The form expired: enter the code again.');
      const memberships = await redeemSignInCode(signIn, parsed.data.email, parsed.data.code);
      if (!memberships) return refuse(401, parsed.data.email, 'That code is not right, was used, or has expired. After 5 wrong tries, ask for a new one.');
      await startSession(ctx, memberships[0]!.id, parsed.data.email, memberships[0]!.appId);
      redirect(ctx, '/dashboard');
    });
    router.post('/logout', signedIn, async (ctx) => {
      await form(ctx, ZCsrfOnly, 'read');
      await store.end(ctx.state.session!.id);
      cookies.clear(ctx);
      redirect(ctx, '/dashboard/login');
    });
    router.post('/switch', signedIn, async (ctx) => {
      const { input } = await form(ctx, ZSwitchApp, 'read');
      const target = (await membershipsOf(prisma, member(ctx).email)).find((u) => u.appId === input.appId);
      if (!target) throw new ApiError('forbidden', 'You have no access to that app.');
      await store.end(ctx.state.session!.id);
      await startSession(ctx, target.id, target.email, target.appId);
      redirect(ctx, '/dashboard');
    });
  }

  async function startSession(ctx: Ctx, userId: string, email: string, appId: string) {
    const id = await store.open(userId, new Date(Date.now() + DASHBOARD_SESSION_SECONDS * 1000));
    cookies.write(ctx, id, email, DASHBOARD_SESSION_SECONDS);
    await recordPartnerAction(prisma, { appId, actor: email, action: 'signed_in' });
  }

  function registerWebhookPages() {
    const endpointRef = (ctx: Ctx) => ({ appId: member(ctx).appId, endpointId: parseInput(ZWebhookEndpointId, ctx.params.id, 'path') });
    const endpointView = async (ctx: Ctx, flash: Flash, status = 200) => {
      const ref = endpointRef(ctx);
      const endpoint = await getWebhookEndpoint(prisma, ref);
      const deliveries = await listWebhookDeliveries(prisma, deps.cursors, ref.appId, { endpointId: ref.endpointId, limit: '50' });
      await send(ctx, status, 'Endpoint', views.endpointPage((await viewerOf(ctx))!, endpoint, deliveries.items, can(ctx, 'manage_webhooks'), flash), '/dashboard/webhooks');
    };
    /** Runs a change; a refusal re-renders the page with the reason and its status, success redirects. */
    const change = async (ctx: Ctx, done: string, rerender: (flash: Flash, status: number) => Promise<void>, run: () => Promise<unknown>) => {
      try {
        await run();
      } catch (err) {
        if (!(err instanceof ApiError) || err.status >= 500 || err.code === 'forbidden' || err.code === 'unsupported_media_type') throw err;
        return rerender({ error: problemOf(err) }, err.status);
      }
      redirect(ctx, `${ctx.path.replace(/\/(disable|enable|archive|test|recover)$/, '')}?done=${done}`);
    };

    router.get('/webhooks', signedIn, async (ctx) => {
      const { items } = await listWebhookEndpoints(prisma, member(ctx).appId);
      await send(ctx, 200, 'Webhooks', views.endpointsPage((await viewerOf(ctx))!, items, can(ctx, 'manage_webhooks'), noticeOf(ctx)), '/dashboard/webhooks');
    });
    router.post('/webhooks', signedIn, async (ctx) => {
      const { fields } = await form(ctx, ZCsrfOnly, 'manage_webhooks');
      const description = fields.get('description')?.trim();
      try {
        const created = await createWebhookEndpoint(endpointDeps, member(ctx).appId, { url: fields.get('url') ?? '', ...(description ? { description } : {}), events: fields.getAll('events') });
        await audit(ctx, 'webhook_endpoint.created', created.endpoint.id);
        await send(ctx, 201, 'Endpoint added', views.secretPage('Endpoint added', `The signing secret of ${created.endpoint.url}.`, created.signingSecret, `/dashboard/webhooks/${created.endpoint.id}`), '/dashboard/webhooks');
      } catch (err) {
        if (!(err instanceof ApiError) || err.status >= 500) throw err;
        const { items } = await listWebhookEndpoints(prisma, member(ctx).appId);
        await send(ctx, err.status, 'Webhooks', views.endpointsPage((await viewerOf(ctx))!, items, true, { error: problemOf(err) }), '/dashboard/webhooks');
      }
    });
    router.get('/webhooks/:id', signedIn, async (ctx) => endpointView(ctx, noticeOf(ctx)));
    router.post('/webhooks/:id', signedIn, async (ctx) => {
      const { fields } = await form(ctx, ZCsrfOnly, 'manage_webhooks');
      const description = fields.get('description')?.trim() ?? '';
      await change(ctx, 'saved', (f, s) => endpointView(ctx, f, s), async () => {
        await updateWebhookEndpoint(prisma, endpointRef(ctx), { description: description === '' ? null : description, events: fields.getAll('events') });
        await audit(ctx, 'webhook_endpoint.updated', endpointRef(ctx).endpointId);
      });
    });
    const simple: Array<[string, string, (ref: { appId: string; endpointId: string }) => Promise<unknown>]> = [
      ['disable', 'disabled', (ref) => disableWebhookEndpoint(prisma, ref)],
      ['enable', 'enabled', (ref) => enableWebhookEndpoint(prisma, ref)],
      ['archive', 'archived', (ref) => archiveWebhookEndpoint(prisma, ref)],
    ];
    for (const [action, done, run] of simple) {
      router.post(`/webhooks/:id/${action}`, signedIn, async (ctx) => {
        await form(ctx, ZCsrfOnly, 'manage_webhooks');
        await change(ctx, done, (f, s) => endpointView(ctx, f, s), async () => {
          await run(endpointRef(ctx));
          await audit(ctx, `webhook_endpoint.${done}`, endpointRef(ctx).endpointId);
        });
      });
    }
    router.post('/webhooks/:id/test', signedIn, async (ctx) => {
      await form(ctx, ZCsrfOnly, 'manage_webhooks');
      const app = await dashboardApp(prisma, member(ctx).appId);
      await change(ctx, 'tested', (f, s) => endpointView(ctx, f, s), async () => {
        const sent = await sendTestEvent(prisma, endpointRef(ctx), app.apiVersion);
        await audit(ctx, 'webhook_endpoint.test_sent', sent.deliveryId);
        await kick(ctx);
      });
    });
    router.post('/webhooks/:id/recover', signedIn, async (ctx) => {
      const { fields } = await form(ctx, ZCsrfOnly, 'manage_webhooks');
      const since = ZSinceUtc.safeParse(fields.get('since') ?? '');
      if (!since.success) return endpointView(ctx, { error: 'since: a date and time (UTC)' }, 400);
      await change(ctx, 'recovered', (f, s) => endpointView(ctx, f, s), async () => {
        const { recovery } = await recoverWebhookEndpoint(prisma, endpointRef(ctx), { since: since.data });
        await audit(ctx, `webhook_endpoint.recovered:${recovery.redelivered}+${recovery.newDeliveries}`, recovery.endpointId);
        await kick(ctx);
      });
    });
    router.post('/webhooks/:id/rotate-secret', signedIn, async (ctx) => {
      await form(ctx, ZCsrfOnly, 'manage_webhooks');
      const rotated = await rotateWebhookEndpointSecret(endpointDeps, endpointRef(ctx));
      await audit(ctx, 'webhook_endpoint.secret_rotated', rotated.endpoint.id);
      await send(ctx, 200, 'Secret rotated', views.secretPage('Secret rotated', `The new signing secret of ${rotated.endpoint.url}.`, rotated.signingSecret, `/dashboard/webhooks/${rotated.endpoint.id}`), '/dashboard/webhooks');
    });

    const deliveryRef = (ctx: Ctx) => ({ appId: member(ctx).appId, deliveryId: parseInput(ZWebhookDeliveryId, ctx.params.id, 'path') });
    const deliveryView = async (ctx: Ctx, flash: Flash, status = 200) => {
      const { delivery, attempts } = await getWebhookDelivery(prisma, deliveryRef(ctx));
      await send(ctx, status, 'Delivery', views.deliveryPage((await viewerOf(ctx))!, delivery, attempts, can(ctx, 'manage_webhooks'), flash), '/dashboard/webhooks');
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

  function registerReadPages() {
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
      const present = Object.fromEntries(Object.entries(filter).filter(([, v]) => typeof v === 'string' && v.trim() !== '')) as Record<string, string>;
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
      const list = await listPayments(prisma, app, parseInput(ZListPaymentsQuery, { limit: '50' }, 'query'), deps.cursors);
      const rows = list.data.map((p) => ({ id: p.id, status: p.status, amount: `${p.paymentAmount.amount} ${p.paymentAmount.assetCode}`, createdAt: p.createdAt }));
      await send(ctx, 200, 'Payments', views.resourceListPage('Payments', '/dashboard/payments', rows), '/dashboard/payments');
    });
    router.get('/payments/:id', signedIn, async (ctx) => {
      const app = await dashboardApp(prisma, member(ctx).appId);
      const id = String(ctx.params.id).slice(0, 64);
      const view = paymentResponse(await loadPayment(prisma, app.id, id));
      await send(ctx, 200, `Payment ${id}`, views.resourcePage(`Payment ${id}`, view, await timelineOf(prisma, app, id)), '/dashboard/payments');
    });
    router.get('/deposits', signedIn, async (ctx) => {
      const app = await dashboardApp(prisma, member(ctx).appId);
      const rows = await recentDeposits(prisma, app);
      await send(ctx, 200, 'Deposits', views.resourceListPage('Deposits', '/dashboard/deposits', rows), '/dashboard/deposits');
    });
    router.get('/deposits/:id', signedIn, async (ctx) => {
      const app = await dashboardApp(prisma, member(ctx).appId);
      const id = String(ctx.params.id).slice(0, 64);
      const view = await depositOf(prisma, app, id);
      await send(ctx, 200, `Deposit ${id}`, views.resourcePage(`Deposit ${id}`, { deposit: view }, await timelineOf(prisma, app, id)), '/dashboard/deposits');
    });
    router.get('/requests', signedIn, async (ctx) => {
      await send(ctx, 200, 'Request log', views.requestsPage(await recentRequests(prisma, member(ctx).appId)), '/dashboard/requests');
    });
    router.get('/audit', signedIn, async (ctx) => {
      await send(ctx, 200, 'Audit', views.auditPage(await listPartnerActions(prisma, member(ctx).appId)), '/dashboard/audit');
    });
  }

  function registerCredentialPages() {
    const credentialsView = async (ctx: Ctx, flash: Flash, status = 200) => {
      const app = await dashboardApp(prisma, member(ctx).appId);
      await send(ctx, status, 'Credentials', views.credentialsPage((await viewerOf(ctx))!, app, can(ctx, 'manage_credentials'), flash), '/dashboard/credentials');
    };
    router.get('/credentials', signedIn, async (ctx) => credentialsView(ctx, {}));
    router.post('/credentials/rotate', signedIn, async (ctx) => {
      const { input } = await form(ctx, ZRotateForm, 'manage_credentials');
      const appId = member(ctx).appId;
      const rotated = await prisma.$transaction(async (tx) => {
        const r = await rotateAppSecret(tx, appId, input.overlapHours * 3600);
        await recordPartnerAction(tx, { appId, actor: member(ctx).email, action: 'app_secret.rotated', target: `previous secrets expire at ${r.previousSecretsExpireAt}` });
        return r;
      });
      await send(ctx, 201, 'Secret rotated', views.secretPage('Secret rotated', `The new secret of ${appId}; the previous one stops at ${rotated.previousSecretsExpireAt}.`, rotated.appSecret, '/dashboard/credentials'), '/dashboard/credentials');
    });
    router.post('/credentials/revoke', signedIn, async (ctx) => {
      const { input } = await form(ctx, ZRevokeForm, 'manage_credentials');
      const appId = member(ctx).appId;
      if (input.confirm !== appId) return credentialsView(ctx, { error: 'Type the app id exactly to confirm the revocation.' }, 400);
      await prisma.$transaction(async (tx) => {
        await revokeApp(tx, appId);
        await recordPartnerAction(tx, { appId, actor: member(ctx).email, action: 'app_secret.revoked' });
      });
      await credentialsView(ctx, { notice: 'The app is revoked: every secret and client token is refused from now on.' });
    });
  }

  app.use(router.routes() as unknown as Koa.Middleware<ApiState>);
  app.use(router.allowedMethods() as unknown as Koa.Middleware<ApiState>);
}
