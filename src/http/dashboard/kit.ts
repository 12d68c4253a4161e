import { randomBytes } from 'node:crypto';
import type Router from '@koa/router';
import type { z } from 'zod';
import type { ServiceConfig } from '../../config';
import type { PrismaClient } from '../../db/client';
import type { Mailer } from '../../mail/mailer';
import type { WebhookEngine } from '../../domain/engine/pure/engine';
import { ApiError } from '../../domain/requests/errors';
import type { CursorCodec } from '../../domain/requests/pagination';
import { parseInput } from '../../domain/requests/validation';
import type { ServiceSecret } from '../../domain/keys/service-keys';
import { recordPartnerAction } from '../../domain/dashboard/partner-actions';
import { partnerSessionStore, type PartnerSessionStore, type PartnerSessionUser } from '../../domain/dashboard/partner-sessions';
import { forbiddenFor, membershipsOf, roleAllows, type PartnerPermission } from '../../domain/dashboard/partner-users';
import type { SignInDeps } from '../../domain/dashboard/sign-in';
import type { WebhookEndpointDeps } from '../../domain/webhooks/endpoints';
import type { ApiContext, ApiState } from '../context';
import { htmlAreaCspWithScript, readForm } from '../html-area';
import type { Html } from '../html';
import { sealedCookies, type CookieSession, type SealedCookies } from '../sealed-cookies';
import * as views from './dashboard-views';
import { loadFinalityScript } from './live-finality';
import type { Flash, Viewer } from './dashboard-views';
import type { TEnvironments } from '../../config/environments';
import { requireWebhooksIn } from '../../domain/webhooks/webhooks-module';

/**
 * What every page of the partner dashboard shares: its dependencies, the signed-in member, the
 * answer's shell, forms under CSRF and role, the audit, and the dispatcher kick. Built once by
 * `dashboardKit`; each page module registers its routes with it.
 */
export interface DashboardDeps {
  config: ServiceConfig;
  prisma: PrismaClient;
  serviceSecret: ServiceSecret;
  mailer: Mailer | null;
  cursors: CursorCodec;
  engine?: Pick<WebhookEngine, 'kickWebhookDispatcher'>;
  /** The per-address limit on the sign-in forms (asking for a code, entering one); none when absent. */
  signInLimit?: (ctx: DashboardCtx, next: Next) => Promise<unknown>;
  /** Where endpoints may be managed: the environments the webhooks module runs in (absent: everywhere). */
  environments?: TEnvironments;
}

export const DASHBOARD_SESSION_SECONDS = 8 * 3600;

export type DashboardState = ApiState & { member?: PartnerSessionUser; session?: CookieSession };
export type DashboardCtx = ApiContext & { state: DashboardState };
export type DashboardRouter = Router<DashboardState>;
type Next = () => Promise<unknown>;

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

export interface DashboardKit {
  deps: DashboardDeps;
  prisma: PrismaClient;
  store: PartnerSessionStore;
  cookies: SealedCookies;
  endpointDeps: WebhookEndpointDeps;
  signIn: SignInDeps;
  /** The live finality bars' script (public/dashboard/finality.js), read once, and its content-hashed URL. */
  finalityScript: { body: Buffer; url: string };
  viewerOf(ctx: DashboardCtx): Promise<Viewer | null>;
  /**
   * Answers a page. With `script` (live finality bars), the page carries that one script under a
   * nonce of this answer's own, and the answer's CSP allows it and nothing more (htmlAreaCspWithScript).
   */
  send(ctx: DashboardCtx, status: number, title: string, body: Html, current?: string, script?: string): Promise<void>;
  redirect(ctx: DashboardCtx, to: string): void;
  /** Middleware: a live session, or the sign-in page (GET) / 401. */
  signedIn(ctx: DashboardCtx, next: Next): Promise<unknown>;
  member(ctx: DashboardCtx): PartnerSessionUser;
  can(ctx: DashboardCtx, permission: PartnerPermission): boolean;
  /** A signed-in member's form: its CSRF token must be the session's, and the role must allow it. */
  form<T extends z.ZodType>(
    ctx: DashboardCtx,
    schema: T,
    permission: PartnerPermission,
  ): Promise<{ input: z.output<T>; fields: URLSearchParams }>;
  audit(ctx: DashboardCtx, action: string, target?: string): Promise<void>;
  kick(ctx: DashboardCtx): Promise<void>;
  noticeOf(ctx: DashboardCtx): Flash;
  startSession(ctx: DashboardCtx, userId: string, email: string, appId: string): Promise<void>;
}

export function dashboardKit(deps: DashboardDeps): DashboardKit {
  const { prisma } = deps;
  const store = partnerSessionStore(prisma);
  const cookies = sealedCookies({
    path: '/dashboard',
    sessionCookie: 'pp_dashboard',
    label: 'dashboard-session',
    serviceSecret: deps.serviceSecret,
    publicBaseUrl: deps.config.http.publicBaseUrl,
  });
  const member = (ctx: DashboardCtx) => ctx.state.member!;
  const kit: DashboardKit = {
    deps,
    prisma,
    store,
    cookies,
    endpointDeps: { prisma, serviceSecret: deps.serviceSecret, destinations: deps.config.webhooks },
    signIn: { prisma, serviceSecret: deps.serviceSecret, mailer: deps.mailer },
    finalityScript: loadFinalityScript(),
    viewerOf: (ctx) => viewerOf(prisma, ctx),
    async send(ctx, status, title, body, current = '', script) {
      const viewer = await viewerOf(prisma, ctx);
      ctx.status = status;
      ctx.type = 'text/html; charset=utf-8';
      if (!script) {
        ctx.body = views.page(title, viewer, body, current);
        return;
      }
      const nonce = randomBytes(18).toString('base64');
      ctx.set('Content-Security-Policy', htmlAreaCspWithScript(nonce));
      ctx.body = views.page(title, viewer, body, current, { src: script, nonce });
    },
    redirect(ctx, to) {
      ctx.status = 303;
      ctx.redirect(to);
    },
    signedIn: (ctx, next) => signedIn(kit, ctx, next),
    member,
    can: (ctx, permission) => roleAllows(member(ctx).role, permission),
    async form(ctx, schema, permission) {
      const fields = await readForm(ctx);
      if (!cookies.csrfMatches(ctx.state.session!, fields.get('_csrf') ?? '')) {
        throw new ApiError('forbidden', 'The form has expired or did not come from this dashboard: reload the page and try again.');
      }
      if (!kit.can(ctx, permission)) throw forbiddenFor(member(ctx).role);
      if (permission === 'manage_webhooks' && deps.environments) requireWebhooksIn(deps.environments, member(ctx).environment);
      return { input: parseInput(schema, Object.fromEntries(fields), 'body'), fields };
    },
    audit: (ctx, action, target) =>
      recordPartnerAction(prisma, { appId: member(ctx).appId, actor: member(ctx).email, action, ...(target ? { target } : {}) }),
    async kick(ctx) {
      if (deps.engine)
        await deps.engine
          .kickWebhookDispatcher()
          .catch((err: unknown) => ctx.state.log.warn({ err }, 'could not kick the webhook dispatcher'));
    },
    noticeOf(ctx) {
      const done = typeof ctx.query.done === 'string' ? NOTICES[ctx.query.done] : undefined;
      return done ? { notice: done } : {};
    },
    async startSession(ctx, userId, email, appId) {
      const id = await store.open(userId, new Date(Date.now() + DASHBOARD_SESSION_SECONDS * 1000));
      cookies.write(ctx, id, email, DASHBOARD_SESSION_SECONDS);
      await recordPartnerAction(prisma, { appId, actor: email, action: 'signed_in' });
    },
  };
  return kit;
}

async function viewerOf(prisma: PrismaClient, ctx: DashboardCtx): Promise<Viewer | null> {
  const m = ctx.state.member;
  if (!m || !ctx.state.session) return null;
  const others = (await membershipsOf(prisma, m.email)).filter((u) => u.appId !== m.appId).map((u) => u.appId);
  return { email: m.email, role: m.role, appId: m.appId, environment: m.environment, csrf: ctx.state.session.csrf, otherApps: others };
}

async function signedIn(kit: DashboardKit, ctx: DashboardCtx, next: Next): Promise<unknown> {
  const session = kit.cookies.read(ctx);
  const member = session ? await kit.store.live(session.id) : null;
  if (!session || !member) {
    if (ctx.method === 'GET') return kit.redirect(ctx, '/dashboard/login');
    throw new ApiError('unauthorized', 'Sign in first: your session has ended.');
  }
  ctx.state.session = session;
  ctx.state.member = member;
  return next();
}
