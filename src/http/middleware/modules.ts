import type { ModuleId, TEnvironments } from '../../config/environments';
import { moduleAvailability, moduleUnavailable, type Availability, type ModuleRuntime } from '../../domain/apps/modules';
import type { Scope } from '../../domain/apps/apps';
import { requireApp, type ApiMiddleware, type ApiState } from '../context';
import { requireScope } from './auth';

/**
 * Tells the routes after it what the deployment runs (the off-ramp provider), so requireModule can
 * judge a module as GET /v2/partners/config reports it. Runs after authentication.
 */
export function moduleRuntime(environments: TEnvironments, runtime: ModuleRuntime): ApiMiddleware {
  return async (ctx, next) => {
    ctx.state.modules = { environments, runtime };
    await next();
  };
}

/**
 * 424 chain_config_missing when a module of the route is not entitled or not operational for the
 * app's environment (src/domain/apps/modules.ts, the config's modules[]). Placed after requireScope: a
 * missing scope is 403 first; and before the idempotency record and the body are read, so a refused
 * call creates nothing.
 */
export function requireModule(...ids: [ModuleId, ...ModuleId[]]): ApiMiddleware {
  return async (ctx, next) => {
    for (const id of ids) {
      const state = moduleState(ctx, id);
      if (!state.available) throw moduleUnavailable(id, state.disabledReason!);
    }
    await next();
  };
}

/** The module as the app's environment and this deployment run it (the credential's scope aside, as in requireModule). */
export function moduleState(ctx: { state: ApiState }, id: ModuleId): Availability {
  const modules = ctx.state.modules;
  if (!modules) throw new Error('a module is judged on a router without moduleRuntime');
  return moduleAvailability(id, modules.environments.environments[requireApp(ctx).environment], modules.runtime);
}

/** A route's guard: the credential's scope (403), then its modules (424), in that order everywhere. */
export function requireAccess(scope: Scope, ...modules: [ModuleId, ...ModuleId[]]): [ApiMiddleware, ApiMiddleware] {
  return [requireScope(scope), requireModule(...modules)];
}
