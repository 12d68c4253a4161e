import { revokeApp, rotateAppSecret } from '../../domain/apps/app-credentials';
import { dashboardApp } from '../../domain/dashboard/dashboard-reads';
import { recordPartnerAction } from '../../domain/dashboard/partner-actions';
import { redeemSignInCode, requestSignInCode } from '../../domain/dashboard/sign-in';
import { ZCsrfOnly, ZRevokeForm, ZRotateForm } from './dashboard.schemas';
import * as views from './dashboard-views';
import type { Flash } from './dashboard-views';
import type { DashboardCtx, DashboardKit, DashboardRouter } from './kit';

const WRONG_CODE = 'Enter the code we just emailed you (ask for one above): that one is not right, was used, or has expired.';

/**
 * The app's credential: its id, and (admins) rotating or revoking its secret, each confirmed by a fresh
 * emailed code (a stolen session alone can't take the app's secret). The code is a sign-in code of the
 * member's email: the same throttle, guess limit and lock.
 */
export function registerCredentialPages(router: DashboardRouter, kit: DashboardKit): void {
  const { prisma, viewerOf, send, signedIn, member, can, form, signIn } = kit;
  const freshCode = async (ctx: DashboardCtx, code: string) => (await redeemSignInCode(signIn, member(ctx).email, code)) !== null;
  const credentialsView = async (ctx: DashboardCtx, flash: Flash, status = 200) => {
    const app = await dashboardApp(prisma, member(ctx).appId);
    await send(
      ctx,
      status,
      'Credentials',
      views.credentialsPage((await viewerOf(ctx))!, app, can(ctx, 'manage_credentials'), flash),
      '/dashboard/credentials',
    );
  };
  router.get('/credentials', signedIn, async (ctx) => credentialsView(ctx, {}));
  router.post('/credentials/code', signedIn, async (ctx) => {
    await form(ctx, ZCsrfOnly, 'manage_credentials');
    const { outcome, mailing } = await requestSignInCode(signIn, member(ctx).email);
    // A signed-in member learns nothing from the wait: a failed send is theirs to see, as before.
    const failed = await mailing;
    if (failed) throw failed;
    if (outcome !== 'sent') ctx.state.log.warn({ outcome }, 'partner dashboard confirmation code not sent');
    await credentialsView(
      ctx,
      outcome === 'sent'
        ? { notice: `We emailed a code to ${member(ctx).email}. It works once, for 10 minutes.` }
        : { error: 'No code was sent: too many were asked for, or this email is locked. Try again later or ask your operator.' },
      outcome === 'sent' ? 200 : 429,
    );
  });
  router.post('/credentials/rotate', signedIn, async (ctx) => {
    const { input } = await form(ctx, ZRotateForm, 'manage_credentials');
    if (!(await freshCode(ctx, input.code))) return credentialsView(ctx, { error: WRONG_CODE }, 403);
    const appId = member(ctx).appId;
    const rotated = await prisma.$transaction(async (tx) => {
      const r = await rotateAppSecret(tx, appId, input.overlapHours * 3600);
      await recordPartnerAction(tx, {
        appId,
        actor: member(ctx).email,
        action: 'app_secret.rotated',
        target: `previous secrets expire at ${r.previousSecretsExpireAt}`,
      });
      return r;
    });
    await send(
      ctx,
      201,
      'Secret rotated',
      views.secretPage(
        'Secret rotated',
        `The new secret of ${appId}; the previous one stops at ${rotated.previousSecretsExpireAt}.`,
        rotated.appSecret,
        '/dashboard/credentials',
      ),
      '/dashboard/credentials',
    );
  });
  router.post('/credentials/revoke', signedIn, async (ctx) => {
    const { input } = await form(ctx, ZRevokeForm, 'manage_credentials');
    const appId = member(ctx).appId;
    if (input.confirm !== appId) return credentialsView(ctx, { error: 'Type the app id exactly to confirm the revocation.' }, 400);
    if (!(await freshCode(ctx, input.code))) return credentialsView(ctx, { error: WRONG_CODE }, 403);
    await prisma.$transaction(async (tx) => {
      await revokeApp(tx, appId);
      await recordPartnerAction(tx, { appId, actor: member(ctx).email, action: 'app_secret.revoked' });
    });
    await credentialsView(ctx, { notice: 'The app is revoked: every secret and client token is refused from now on.' });
  });
}
