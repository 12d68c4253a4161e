import { ApiError } from '../../domain/requests/errors';
import { membershipsOf } from '../../domain/dashboard/partner-users';
import { redeemSignInCode, requestSignInCode } from '../../domain/dashboard/sign-in';
import { readForm } from '../html-area';
import { ZCsrfOnly, ZSignInCode, ZSignInEmail, ZSwitchApp } from './dashboard.schemas';
import * as views from './dashboard-views';
import type { DashboardKit, DashboardRouter } from './kit';

/** Sign-in by emailed code, sign-out, and switching between the apps an email holds. */
export function registerSignInPages(router: DashboardRouter, kit: DashboardKit): void {
  const { prisma, store, cookies, signIn, send, redirect, signedIn, member, form, startSession } = kit;
  // Beside the per-email throttle and lock: one address asking for or guessing codes for many emails.
  const limited = kit.deps.signInLimit ?? ((_ctx, next) => next());
  router.get('/login', async (ctx) => {
    await send(ctx, 200, 'Sign in', views.signInPage(cookies.loginCsrf(ctx), {}));
  });
  router.post('/login', limited, async (ctx) => {
    const fields = Object.fromEntries(await readForm(ctx));
    if (!cookies.loginCsrfMatches(ctx, fields._csrf ?? ''))
      return send(ctx, 403, 'Sign in', views.signInPage(cookies.loginCsrf(ctx), { error: 'The sign-in form expired: try again.' }));
    const parsed = ZSignInEmail.safeParse(fields);
    if (!parsed.success) return send(ctx, 400, 'Sign in', views.signInPage(cookies.loginCsrf(ctx), { error: 'Enter an email address.' }));
    const { outcome, mailing } = await requestSignInCode(signIn, parsed.data.email);
    // The page is the same whatever happened, and sent as soon: it must not tell who has access.
    if (outcome !== 'sent') ctx.state.log.warn({ outcome }, 'partner dashboard sign-in code not sent');
    void mailing.then((err) => err && ctx.state.log.error({ err }, 'partner dashboard sign-in code: the mail was not sent'));
    await send(ctx, 200, 'Enter your code', views.codePage(cookies.loginCsrf(ctx), parsed.data.email, {}));
  });
  router.post('/login/code', limited, async (ctx) => {
    const fields = Object.fromEntries(await readForm(ctx));
    const refuse = (status: number, email: string, error: string) =>
      send(ctx, status, 'Enter your code', views.codePage(cookies.loginCsrf(ctx), email, { error }));
    const parsed = ZSignInCode.safeParse(fields);
    if (!parsed.success)
      return send(ctx, 400, 'Sign in', views.signInPage(cookies.loginCsrf(ctx), { error: 'Start again: enter your email.' }));
    if (!cookies.loginCsrfMatches(ctx, parsed.data._csrf)) return refuse(403, parsed.data.email, 'The form expired: enter the code again.');
    const memberships = await redeemSignInCode(signIn, parsed.data.email, parsed.data.code);
    if (!memberships)
      return refuse(
        401,
        parsed.data.email,
        'That code is not right, was used, or has expired. After 5 wrong tries, ask for a new one; after many, ask your operator to unlock your email.',
      );
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
