import type { TEnvironments } from '../../config/environments';
import type { MailAvailability } from '../../domain/vaults/vault-config';
import { buildPartnerConfig } from '../../domain/partner-config';
import { requireApp, type ApiRouter } from '../context';

/** Any valid credential may read its configuration: it is how a partner verifies credentials. */
export function registerPartnerConfigRoutes(router: ApiRouter, deps: { environments: TEnvironments; mail?: MailAvailability }): void {
  router.get('/v2/partners/config', (ctx) => {
    ctx.body = buildPartnerConfig(requireApp(ctx), deps.environments, deps.mail);
  });
}
