import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import type { PrismaClient } from '../../db/client';
import { operatorOfIdentity } from '../../domain/operators/operator-accounts';
import type { OidcTransaction, OperatorOidc } from '../../domain/operators/operator-oidc';
import { openSealedText, sealText } from '../../domain/keys/sealed-text';
import type { ServiceSecret } from '../../domain/keys/service-keys';
import type { OperatorThrottle } from '../middleware/admin-auth';
import type { ApiContext } from '../context';
import { cookiePlace } from '../sealed-cookies';
import type { SessionKeeper } from './console-session';
import { html, messagePage, type Html } from './console-views';

/**
 * The console's sign-in through the company's OpenID Connect provider, where one is configured:
 *
 *   GET /console/login/oidc            to the provider, with state, nonce and PKCE kept in a sealed cookie
 *   GET /console/login/oidc/callback   the provider's answer: checked, then the operator it binds to signed in
 *
 * The start is a link, not a form: the console's `form-action 'self'` would stop a form's redirect
 * to the provider. The transaction cookie is SameSite=Lax, since the provider's redirect back is a
 * cross-site navigation; the session cookie is Strict, so the callback answers a page that moves on
 * to the console itself, a same-site navigation that carries it.
 */
export interface OidcSignInDeps {
  oidc: OperatorOidc;
  prisma: PrismaClient;
  serviceSecret: ServiceSecret;
  throttle: OperatorThrottle;
  sessions: SessionKeeper;
  adminBaseUrl: string;
  send(ctx: ApiContext, status: number, title: string, body: Html): void;
}

const TRANSACTION_SECONDS = 600;
const LABEL = 'console-oidc';

export function registerOidcSignIn<S extends ApiContext['state']>(router: Router<S>, deps: OidcSignInDeps): void {
  const cookie = transactionCookie(deps.serviceSecret, deps.adminBaseUrl);
  const refuse = (ctx: ApiContext, status: number, message: string) =>
    deps.send(
      ctx,
      status,
      'Sign in',
      html`<h1>Sign in</h1><p class="error" role="alert">${message}</p><p><a href="/console/login/oidc">Start again</a></p>`,
    );

  router.get('/login/oidc', async (c) => {
    const ctx = c as unknown as ApiContext;
    await deps.throttle.addressAttempt(ctx);
    const { url, transaction } = await deps.oidc.begin().catch((err: unknown) => {
      ctx.state.log.error({ err: String(err) }, 'the operator identity provider could not be reached');
      return { url: null, transaction: null };
    });
    if (!url) return refuse(ctx, 503, 'The company sign-in service cannot be reached right now: try again in a moment.');
    cookie.write(ctx, transaction);
    ctx.status = 303;
    ctx.redirect(url);
  });

  router.get('/login/oidc/callback', async (c) => {
    const ctx = c as unknown as ApiContext;
    await deps.throttle.addressAttempt(ctx);
    const transaction = cookie.take(ctx);
    if (!transaction) return refuse(ctx, 400, 'This sign-in took too long or was not started in this browser.');
    const identity = await deps.oidc.finish(ctx.querystring, transaction).catch((err: unknown) => {
      ctx.state.log.warn({ err: String(err) }, 'operator console sign-in: the identity provider’s answer was refused');
      return null;
    });
    if (!identity) return refuse(ctx, 401, 'The company sign-in did not complete.');
    const operator = await operatorOfIdentity(deps.prisma, identity);
    if (!operator) {
      ctx.state.log.warn({ operatorEmail: identity.email, oidcSubject: identity.subject }, 'operator console sign-in refused: no operator');
      return refuse(ctx, 403, 'Your company account is not an operator of this console, or it is disabled. An admin adds operators.');
    }
    await deps.sessions.start(ctx, operator);
    deps.send(ctx, 200, 'Signed in', continuePage());
  });
}

/** A same-site step to the console, so the new Strict session cookie goes with it. */
function continuePage(): Html {
  return html`<meta http-equiv="refresh" content="0;url=/console">${messagePage('Signed in', 'Opening the console…')}`;
}

/** The flow's state, nonce and PKCE verifier, sealed in a cookie the callback reads once. */
function transactionCookie(serviceSecret: ServiceSecret, adminBaseUrl: string) {
  const place = cookiePlace(adminBaseUrl, 'pp_console_oidc', '/console/login/oidc');
  const set = (ctx: ParameterizedContext<unknown>, value: string | null, seconds: number) => {
    if (place.secure) ctx.cookies.secure = true;
    ctx.cookies.set(place.name, value, {
      httpOnly: true,
      sameSite: 'lax',
      path: place.path,
      secure: place.secure,
      maxAge: seconds * 1000,
      overwrite: true,
    });
  };
  return {
    write(ctx: ParameterizedContext<unknown>, t: OidcTransaction) {
      const value = { ...t, expiresAt: Date.now() + TRANSACTION_SECONDS * 1000 };
      set(ctx, sealText(serviceSecret, LABEL, place.name, JSON.stringify(value)), TRANSACTION_SECONDS);
    },
    take(ctx: ParameterizedContext<unknown>): OidcTransaction | null {
      const raw = ctx.cookies.get(place.name);
      set(ctx, null, 0);
      const opened = raw ? openSealedText(serviceSecret, LABEL, place.name, raw) : null;
      if (typeof opened !== 'string') return null;
      const t = JSON.parse(opened) as OidcTransaction & { expiresAt: number };
      return t.expiresAt > Date.now() ? { state: t.state, nonce: t.nonce, codeVerifier: t.codeVerifier } : null;
    },
  };
}
