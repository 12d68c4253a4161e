import type { TEnvironments } from '../../config/environments';
import type { PrismaClient } from '../../db/client';
import { assertModuleAvailable, moduleAvailability, moduleUnavailable } from '../apps/modules';

/** The webhooks module needs nothing of the deployment: only the environment's list decides. */
const NO_RUNTIME = { offrampProviderCode: null };

/**
 * Whether the webhooks module runs for an environment, as `integrations.webhooks` of
 * GET /v2/partners/config reports it: where it doesn't, no event is delivered and no endpoint is
 * managed (events are still written, and read with GET /v2/events).
 */
export function webhooksRunIn(environments: TEnvironments, environment: string): boolean {
  const env = environments.environments[environment as keyof TEnvironments['environments']];
  return env !== undefined && moduleAvailability('webhooks', env, NO_RUNTIME).available;
}

/**
 * The environments whose apps get deliveries, or undefined when every one does: then the dispatch
 * pass has no app to filter out and reads no app row.
 */
export function deliveringEnvironments(environments: TEnvironments): string[] | undefined {
  const all = Object.keys(environments.environments);
  const delivering = all.filter((e) => webhooksRunIn(environments, e));
  return delivering.length === all.length ? undefined : delivering;
}

/** 424 chain_config_missing naming the webhooks module and why, for a change to an endpoint of an app whose environment has it off. */
export function requireWebhooksIn(environments: TEnvironments, environment: string): void {
  const env = environments.environments[environment as keyof TEnvironments['environments']];
  if (!env) throw moduleUnavailable('webhooks', 'not_entitled');
  assertModuleAvailable('webhooks', env, NO_RUNTIME);
}

/** As requireWebhooksIn, for an app by id (an unknown app is left to the route's own 404). */
export async function requireWebhooksForApp(prisma: PrismaClient, environments: TEnvironments, appId: string): Promise<void> {
  const app = await prisma.app.findUnique({ where: { id: appId }, select: { environment: true } });
  if (app) requireWebhooksIn(environments, app.environment);
}
