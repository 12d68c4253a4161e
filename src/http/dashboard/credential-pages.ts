import { revokeApp, rotateAppSecret } from '../../domain/apps/app-credentials';
import { dashboardApp } from '../../domain/dashboard/dashboard-reads';
import { recordPartnerAction } from '../../domain/dashboard/partner-actions';
import { ZRevokeForm, ZRotateForm } from './dashboard.schemas';
import * as views from './dashboard-views';
import type { Flash } from './dashboard-views';
import type { DashboardCtx, DashboardKit, DashboardRouter } from './kit';

/** The app's credential: its id, and (admins) rotating or revoking its secret. */
export function registerCredentialPages(router: DashboardRouter, kit: DashboardKit): void {
  const { prisma, viewerOf, send, signedIn, member, can, form } = kit;
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
  router.post('/credentials/rotate', signedIn, async (ctx) => {
    const { input } = await form(ctx, ZRotateForm, 'manage_credentials');
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
    await prisma.$transaction(async (tx) => {
      await revokeApp(tx, appId);
      await recordPartnerAction(tx, { appId, actor: member(ctx).email, action: 'app_secret.revoked' });
    });
    await credentialsView(ctx, { notice: 'The app is revoked: every secret and client token is refused from now on.' });
  });
}
