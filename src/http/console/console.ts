import type Koa from 'koa';
import Router from '@koa/router';
import { z } from 'zod';
import type { Hash } from 'viem';
import { adminBaseUrl, type ServiceConfig } from '../../config';
import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { AddressBook } from '../../custody';
import type { OperatorEngine } from '../../domain/engine/pure/engine';
import { ApiError, notFound } from '../../domain/requests/errors';
import { listAlerts } from '../../domain/monitoring/alerts';
import type { CursorCodec } from '../../domain/requests/pagination';
import { listReconciliationRuns } from '../../domain/monitoring/reconciliation-runs';
import { listOperatorActions, type HeldTarget } from '../../domain/operators/operator-actions';
import { recoverFunds, releaseHold, type Outcome } from '../../domain/operators/operator-approvals';
import { registerApprovalPages } from './approval-pages';
import { depositHold, fundReturnHold, listHolds, paymentHold } from '../../domain/operators/operator-holds';
import { searchForOperator } from '../../domain/operators/operator-search';
import { invitePartnerUser, listPartnerUsers } from '../../domain/dashboard/partner-users';
import { ZHeldId } from '../../domain/operators/operator-actions.schemas';
import { parseInput } from '../../domain/requests/validation';
import { zInt4Param } from '../../platform/int4';
import type { ApiContext, ApiState } from '../context';
import { htmlAreaGuard, problemOf, readForm } from '../html-area';
import { sessionKeeper, type ConsoleSession, type SessionKeeper } from './console-session';
import {
  ZConsoleAlerts,
  ZConsoleCsrfOnly,
  ZConsoleLogin,
  ZConsoleCode,
  ZConsoleRecover,
  ZConsoleResolve,
  ZConsoleSearch,
  ZConsoleInvite,
  ZConsoleUsersQuery,
} from './console.schemas';
import {
  alertsPage,
  auditTable,
  CONSOLE_CSS,
  detailPage,
  html,
  itemHref,
  listPage,
  loginPage,
  oidcLoginPage,
  codePage,
  messagePage,
  page,
  receiptPage,
  searchPage,
  type Html,
  type Links,
  dashboardUsersPage,
} from './console-views';
import type { ServiceSecret } from '../../domain/keys/service-keys';
import type { Mailer } from '../../mail/mailer';
import { requestOperatorCode, signInOperator } from '../../domain/operators/operator-sign-in';
import { hasRole, type OperatorRole } from '../../domain/operators/pure/operator-roles';
import type { OperatorThrottle } from '../middleware/admin-auth';
import type { OperatorOidc } from '../../domain/operators/operator-oidc';
import { registerOidcSignIn } from './oidc-sign-in';

/**
 * The operator console (docs/decisions/dashboard-and-console.md "Operator console"): server-rendered pages under /console
 * listing what waits for an operator, each item's story, and forms for the operator actions, which go
 * through src/domain/operators/operator-actions.ts like the CLI and the admin API (one audit). On the admin
 * listener only; an operator signs in through the company's OpenID Connect provider where one is
 * configured (./oidc-sign-in.ts), otherwise with an emailed code and their TOTP, and acts as themselves.
 *
 *   GET  /console/login, POST /console/login (email), POST /console/login/code (code, totp), POST /console/logout
 *   GET  /console                                   Payments, deposits and fund returns held or retrying, open incidents
 *   GET  /console/payments/{paymentId}              facts, timeline, incidents, audit, action forms
 *   POST /console/payments/{paymentId}/resolve      retry | mark-settled (txHash) | fail, with a reason
 *   POST /console/payments/{paymentId}/incident-recoveries   incidentId, destinationAddress?, reason
 *   GET  /console/deposits/{depositId}, POST /console/deposits/{depositId}/resolve
 *   GET  /console/fund-returns/{returnId}, POST /console/fund-returns/{returnId}/resolve   (refunds, incident recoveries)
 *   GET  /console/alerts[?kind=&cursor=]            the last pass of each reconciliation; open alerts, newest first
 *   GET  /console/actions                           the audit, newest first
 *   GET  /console/chains/{chainId}/transactions/{txHash}   a receipt read from the chain's RPC
 */
export interface ConsoleDeps {
  config: ServiceConfig;
  prisma: PrismaClient;
  serviceSecret: ServiceSecret;
  chains: ChainRegistry;
  custody: AddressBook;
  engine: OperatorEngine;
  /** The lists' signed cursors (the open alerts page through them). */
  cursors: CursorCodec;
  /** The Temporal Web UI's base URL; absent: workflow ids are shown without a link. */
  temporalUiUrl?: string;
  /** Sign-in codes go out by this mail; null: kept for `npm run cli -- operators dev-code` (never in production). */
  mailer: Mailer | null;
  throttle: OperatorThrottle;
  /** The company's OpenID Connect provider: when given, the only console sign-in. */
  oidc?: OperatorOidc;
}

const ZTxPath = z.object({ chainId: zInt4Param({ min: 1 }), txHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a transaction hash') });

type State = ApiState & { session?: ConsoleSession };
type Ctx = ApiContext & { state: State };

/** A form's fields as an object (a repeated field keeps its last value). */
const formBody = async (ctx: Ctx): Promise<Record<string, string>> => Object.fromEntries(await readForm(ctx));

export function registerOperatorConsole(app: Koa<ApiState>, deps: ConsoleDeps): void {
  const sessions = sessionKeeper({
    prisma: deps.prisma,
    serviceSecret: deps.serviceSecret,
    sessionSeconds: deps.config.admin.consoleSessionSeconds ?? 3600,
    adminBaseUrl: adminBaseUrl(deps.config.admin),
  });
  const namespace = deps.config.temporal.namespace;
  const links: Links = {
    tx(chainId, txHash) {
      const template = deps.chains.networks().find((n) => n.chainId === chainId)?.explorerTxUrl;
      return template ? template.replace('{txHash}', txHash) : `/console/chains/${chainId}/transactions/${txHash}`;
    },
    workflow: (workflowId) =>
      deps.temporalUiUrl
        ? `${deps.temporalUiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`
        : null,
  };
  const router = new Router<State>({ prefix: '/console' });

  const send = (ctx: Ctx, status: number, title: string, body: Html) => {
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page(title, { who: ctx.state.session?.who ?? null, csrf: ctx.state.session?.csrf ?? null }, body);
  };

  router.use(
    htmlAreaGuard('operator console', (ctx, status, problem) =>
      send(ctx as Ctx, status, 'Error', messagePage(status === 404 ? 'Not found' : 'Request refused', problem)),
    ),
  );

  const signedIn = async (ctx: Ctx, next: () => Promise<unknown>) => {
    const session = await sessions.current(ctx);
    if (!session) {
      if (ctx.method === 'GET') return ctx.redirect('/console/login');
      throw new ApiError('unauthorized', 'Sign in first: your session has ended.');
    }
    ctx.state.session = session;
    ctx.state.operator = session.operator;
    return next();
  };
  /** A signed-in operator holding `role` or a higher one. */
  const may = (role: OperatorRole) => async (ctx: Ctx, next: () => Promise<unknown>) => {
    if (!hasRole(ctx.state.session!.operator.role, role))
      throw new ApiError('forbidden', `This needs the ${role} role; you are ${ctx.state.session!.operator.role}.`);
    return next();
  };
  /** A form of a signed-in operator: its CSRF token must be the session's. */
  const form = async <T extends z.ZodType>(ctx: Ctx, schema: T): Promise<z.output<T>> => {
    const fields = await formBody(ctx);
    if (!ctx.state.session || !sessions.csrfMatches(ctx.state.session, fields._csrf ?? ''))
      throw new ApiError('forbidden', 'The form has expired or did not come from this console: reload the page and try again.');
    return parseInput(schema, fields, 'body');
  };

  router.get('/assets/console.css', (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.type = 'text/css; charset=utf-8';
    ctx.body = CONSOLE_CSS;
  });

  router.get('/login', async (ctx) => {
    if (await sessions.current(ctx)) return ctx.redirect('/console');
    send(ctx, 200, 'Sign in', deps.oidc ? oidcLoginPage() : loginPage(sessions.loginCsrf(ctx), null));
  });

  // Where the company's provider is configured it is the only way in (operators' tokens aside).
  if (deps.oidc) registerOidcSignIn(router, { ...deps, oidc: deps.oidc, sessions, adminBaseUrl: adminBaseUrl(deps.config.admin), send });
  else registerSignIn(router, deps, sessions, send);

  router.post('/logout', signedIn, async (ctx) => {
    await form(ctx, ZConsoleCsrfOnly);
    await sessions.end(ctx, ctx.state.session!);
    ctx.status = 303;
    ctx.redirect('/console/login');
  });

  router.get('/', signedIn, async (ctx) => {
    const data = await listHolds(deps.prisma);
    const workflowIds = new Map<string, string>();
    for (const i of data.items) if (i.kind === 'payment') workflowIds.set(i.id, deps.engine.paymentWorkflowId(i.id));
    for (const i of data.items) if (i.kind === 'fund_return') workflowIds.set(i.id, deps.engine.fundReturnWorkflowId(i.id));
    const deposits = await deps.prisma.deposit.findMany({
      where: { id: { in: data.items.filter((i) => i.kind === 'deposit').map((i) => i.id) } },
      select: { id: true, workflowId: true },
    });
    for (const d of deposits) workflowIds.set(d.id, d.workflowId);
    for (const i of data.items) if (i.workflowId) workflowIds.set(i.id, i.workflowId);
    send(ctx, 200, 'Holds', listPage({ ...data, workflowIds }, links));
  });

  router.get('/search', signedIn, async (ctx) => {
    const { q } = parseInput(ZConsoleSearch, ctx.query, 'query');
    const hits = await searchForOperator(deps.prisma, q);
    // One match: its page, as a pasted id or hash usually means.
    if (hits.length === 1) {
      ctx.status = 303;
      return ctx.redirect(itemHref(hits[0]!));
    }
    send(ctx, 200, 'Find', searchPage(q, hits));
  });

  router.get('/alerts', signedIn, async (ctx) => {
    const { kind, cursor } = parseInput(ZConsoleAlerts, ctx.query, 'query');
    const alerts = await listAlerts(deps.prisma, deps.cursors, {
      open: 'true',
      limit: '100',
      ...(kind ? { kind } : {}),
      ...(cursor ? { cursor } : {}),
    });
    send(
      ctx,
      200,
      'Alerts',
      alertsPage(
        { runs: await listReconciliationRuns(deps.prisma), alerts: alerts.items, nextCursor: alerts.nextCursor, kind: kind ?? null },
        links,
      ),
    );
  });

  // Partner dashboard users: the console's way to invite (the CLI's and the admin API's twin).
  const usersView = async (ctx: Ctx, appId: string | null, flash: { notice?: string; error?: string }, status = 200) => {
    const users = appId ? (await listPartnerUsers(deps.prisma, appId)).items : null;
    send(ctx, status, 'Dashboard users', dashboardUsersPage(ctx.state.session!.csrf, appId, users, flash));
  };
  router.get('/dashboard-users', signedIn, async (ctx) => {
    const { appId } = parseInput(ZConsoleUsersQuery, ctx.query, 'query');
    if (appId && !(await deps.prisma.app.findUnique({ where: { id: appId }, select: { id: true } }))) throw notFound('App');
    await usersView(
      ctx,
      appId ?? null,
      typeof ctx.query.done === 'string' ? { notice: 'Invited: they can sign in with their email now.' } : {},
    );
  });
  router.post('/dashboard-users', signedIn, may('admin'), async (ctx) => {
    const input = await form(ctx, ZConsoleInvite);
    try {
      await invitePartnerUser(deps.prisma, input.appId, { email: input.email, role: input.role, actor: ctx.state.session!.operator.email });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      return usersView(ctx, input.appId, { error: problemOf(err) }, err.status);
    }
    ctx.status = 303;
    ctx.redirect(`/console/dashboard-users?appId=${encodeURIComponent(input.appId)}&done=invited`);
  });

  router.get('/actions', signedIn, async (ctx) => {
    send(
      ctx,
      200,
      'Audit',
      html`<h1>Operator actions</h1><p>The latest 200, newest first, from the console, the CLI and the admin API.</p>${auditTable(await listOperatorActions(deps.prisma, { limit: 200 }), true)}`,
    );
  });

  const detail = async (ctx: Ctx, target: HeldTarget, flash: { notice?: string; error?: string } = {}, status = 200) => {
    const d =
      target.type === 'payment'
        ? await paymentHold(deps.prisma, target.id, deps.engine.paymentWorkflowId(target.id))
        : target.type === 'deposit'
          ? await depositHold(deps.prisma, target.id)
          : await fundReturnHold(deps.prisma, target.id, deps.engine.fundReturnWorkflowId(target.id));
    send(ctx, status, `${target.type} ${target.id}`, detailPage(d, links, ctx.state.session!.csrf, flash));
  };
  const targetOf = (ctx: Ctx, type: HeldTarget['type']): HeldTarget => {
    return { type, id: parseInput(z.object({ id: ZHeldId[type] }), ctx.params, 'path').id };
  };
  const notices: Record<string, string> = {
    retry: 'Retry sent to the workflow: it settles again with a fresh budget.',
    'mark-settled': 'Mark settled sent to the workflow: it records the payout and finishes.',
    fail: 'Fail sent to the workflow.',
    'recover-incident': 'Incident recovery created: its send has started.',
    requested: 'Sent for approval: nothing moves until a second operator with the approver role approves it (Approvals).',
  };
  /** Runs an action; a refusal re-renders the page with the reason (and its status), success redirects (POST/redirect/GET). */
  const act = async (ctx: Ctx, target: HeldTarget, action: string, run: () => Promise<Outcome<unknown>>) => {
    let what = action;
    try {
      if ('approval' in (await run())) what = 'requested';
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500 || err.code === 'forbidden' || err.code === 'unsupported_media_type') throw err;
      return detail(ctx, target, { error: problemOf(err) }, err.status);
    }
    ctx.status = 303;
    ctx.redirect(`${itemHref({ kind: target.type, id: target.id })}?done=${encodeURIComponent(what)}`);
  };

  for (const type of ['payment', 'deposit', 'fund_return'] as const) {
    const base = { payment: '/payments/:id', deposit: '/deposits/:id', fund_return: '/fund-returns/:id' }[type];
    router.get(base, signedIn, async (ctx) => {
      const done = typeof ctx.query.done === 'string' ? notices[ctx.query.done] : undefined;
      await detail(ctx, targetOf(ctx, type), done ? { notice: done } : {});
    });
    router.post(`${base}/resolve`, signedIn, may('operator'), async (ctx) => {
      const target = targetOf(ctx, type);
      const input = await form(ctx, ZConsoleResolve);
      const who = { operator: ctx.state.session!.operator, channel: 'console' as const };
      await act(ctx, target, input.action, () =>
        releaseHold(deps, who, target, { action: input.action, reason: input.reason, ...(input.txHash ? { txHash: input.txHash } : {}) }),
      );
    });
  }

  router.post('/payments/:id/incident-recoveries', signedIn, may('operator'), async (ctx) => {
    const target = targetOf(ctx, 'payment');
    const input = await form(ctx, ZConsoleRecover);
    const who = { operator: ctx.state.session!.operator, channel: 'console' as const };
    await act(ctx, target, 'recover-incident', () =>
      recoverFunds(deps, who, target.id, {
        incidentId: input.incidentId,
        reason: input.reason,
        ...(input.destinationAddress ? { destinationAddress: input.destinationAddress } : {}),
      }),
    );
  });

  registerApprovalPages(router, { ...deps, signedIn, may, form, send });

  router.get('/chains/:chainId/transactions/:txHash', signedIn, async (ctx) => {
    const { chainId, txHash } = parseInput(ZTxPath, ctx.params, 'path');
    if (!deps.chains.networks().some((n) => n.chainId === chainId)) throw notFound('Network');
    const chain = deps.chains.get(chainId);
    const hash = txHash.toLowerCase() as Hash;
    const [inclusion, status, transfers] = await Promise.all([
      chain.getTransactionInclusion(hash),
      chain.getTransactionStatus(hash, deps.chains.network(chainId).confirmations),
      chain.getTransactionTransfers(hash).catch(() => []),
    ]);
    const facts: Array<[string, string]> = [
      ['Status', status],
      ['Block', inclusion ? inclusion.blockNumber.toString() : '—'],
      ['Succeeded', inclusion ? String(inclusion.success) : '—'],
    ];
    send(
      ctx,
      200,
      'Transaction',
      receiptPage(
        chainId,
        hash,
        facts,
        transfers.map((t) => ({ from: t.from, to: t.to, amount: t.amountAtomic.toString(), token: t.token })),
      ),
    );
  });

  app.use(router.routes() as unknown as Koa.Middleware<ApiState>);
  app.use(router.allowedMethods() as unknown as Koa.Middleware<ApiState>);
}

/** Sign-in: an email asks for a code; the emailed code and the authenticator's code open a session. */
function registerSignIn(
  router: Router<State>,
  deps: ConsoleDeps,
  sessions: SessionKeeper,
  send: (ctx: Ctx, status: number, title: string, body: Html) => void,
): void {
  router.post('/login', async (ctx) => {
    const fields = await formBody(ctx);
    const refuse = (status: number, message: string) => send(ctx, status, 'Sign in', loginPage(sessions.loginCsrf(ctx), message));
    if (!sessions.loginCsrfMatches(ctx, fields._csrf ?? '')) return refuse(403, 'The sign-in form expired: try again.');
    const parsed = ZConsoleLogin.safeParse(fields);
    if (!parsed.success) return refuse(400, parsed.error.issues.map((i) => i.message).join('; '));
    await deps.throttle.signInAttempt(ctx, parsed.data.email);
    await requestOperatorCode({ ...deps, keepOutbox: deps.config.deployment !== 'production' }, parsed.data.email);
    send(ctx, 200, 'Sign in', codePage(sessions.loginCsrf(ctx), parsed.data.email, null));
  });

  router.post('/login/code', async (ctx) => {
    const fields = await formBody(ctx);
    const email = (fields.email ?? '').slice(0, 254);
    const refuse = (status: number, message: string) => send(ctx, status, 'Sign in', codePage(sessions.loginCsrf(ctx), email, message));
    if (!sessions.loginCsrfMatches(ctx, fields._csrf ?? '')) return refuse(403, 'The sign-in form expired: try again.');
    const parsed = ZConsoleCode.safeParse(fields);
    if (!parsed.success) return refuse(400, parsed.error.issues.map((i) => i.message).join('; '));
    await deps.throttle.signInAttempt(ctx, parsed.data.email);
    const operator = await signInOperator(deps, parsed.data.email, parsed.data.code, parsed.data.totp);
    if (!operator) {
      ctx.state.log.warn({ operatorEmail: parsed.data.email }, 'operator console sign-in refused');
      return refuse(401, 'Those codes are not right, or the emailed code has expired: try again, or ask for a new code.');
    }
    await sessions.start(ctx, operator);
    ctx.status = 303;
    ctx.redirect('/console');
  });
}
