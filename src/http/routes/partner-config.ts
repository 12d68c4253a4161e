import type { TEnvironments } from '../../config/environments';
import { buildPartnerConfig, type ConfigRuntime } from '../../domain/apps/partner-config';
import { requireApp, type ApiRouter } from '../context';

/** Any valid credential may read its configuration: it is how a partner verifies credentials. */
export function registerPartnerConfigRoutes(router: ApiRouter, deps: { environments: TEnvironments; runtime: ConfigRuntime }): void {
  router.get('/v2/partners/config', (ctx) => {
    ctx.body = buildPartnerConfig(requireApp(ctx), deps.environments, deps.runtime);
  });
}
