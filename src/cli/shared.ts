import os from 'node:os';
import { parseArgs } from 'node:util';
import type { ServiceConfig } from '../config';
import { loadEnvironments, withRpcUrl } from '../config/environments';
import { createChainRegistry, type ChainRegistry } from '../chain/registry';
import { RESOLUTION_ACTIONS, type ResolutionAction, type ResolutionRequest } from '../domain/operator-resolution';
import { connectTemporalGateway, type TemporalGateway } from '../temporal/gateway';

/**
 * The networks' chain clients as the service reaches them: the sandbox network through the embedded
 * anvil (EMBEDDED_ANVIL_PORT), production networks as configured.
 */
export function chainsFor(config: ServiceConfig): ChainRegistry {
  const envs = loadEnvironments(config.environmentsFile);
  const sandbox = envs.environments.sandbox.networks[0];
  return createChainRegistry(sandbox ? withRpcUrl(envs, sandbox.chainId, `http://127.0.0.1:${config.anvil.embeddedPort}`) : envs);
}

/** A command called wrongly: the CLI prints the usage and exits 2 (other failures exit 1). */
export class UsageError extends Error {}

/** Runs fn with the gateway to the configured Temporal, or to the embedded dev server `npm start` runs. */
export async function withEngine<T>(config: ServiceConfig, fn: (engine: TemporalGateway) => Promise<T>): Promise<T> {
  const engine = await connectTemporalGateway({
    address: config.temporal.address ?? `127.0.0.1:${config.temporal.embeddedPort}`,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
  });
  try {
    return await fn(engine);
  } finally {
    await engine.close();
  }
}

export type ResolutionArgs = ResolutionRequest & { id: string };

/** `<id> --action retry|mark-settled|fail [--tx <hash>] [--reason <text>] [--actor <who>]`, checked. */
export function parseResolutionArgs(argv: string[], usage: string): ResolutionArgs {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { action: { type: 'string' }, tx: { type: 'string' }, reason: { type: 'string' }, actor: { type: 'string' } },
    strict: true,
  });
  const id = positionals[0];
  const action = values.action as ResolutionAction | undefined;
  if (!id || !action || !RESOLUTION_ACTIONS.includes(action)) throw new Error(usage);
  if (action === 'mark-settled' && !/^0x[0-9a-fA-F]{64}$/.test(values.tx ?? '')) throw new Error('mark-settled needs --tx <0x… transaction hash>');
  if (action === 'fail' && !values.reason) throw new Error('fail needs --reason <text>');
  return {
    id,
    action,
    ...(values.tx ? { txHash: values.tx } : {}),
    ...(values.reason ? { reason: values.reason } : {}),
    actor: values.actor ?? `cli:${os.userInfo().username}`,
  };
}
