import type { ModuleId, TEnvironments } from '../../src/config/environments';

/** The environments with modules taken off the sandbox's list: what a deployment that doesn't run them serves. */
export function sandboxWithout(envs: TEnvironments, ...ids: ModuleId[]): TEnvironments {
  const sandbox = envs.environments.sandbox;
  return {
    ...envs,
    environments: { ...envs.environments, sandbox: { ...sandbox, modules: sandbox.modules.filter((m) => !ids.includes(m)) } },
  };
}
