import os from 'node:os';
import { parseArgs } from 'node:util';
import { loadConfig, type ServiceConfig } from '../config';
import { loadEnvironmentsReport, withRpcUrl } from '../config/environments';
import { createChainRegistry, type ChainRegistry } from '../chain/registry';
import { dataDir } from '../embedded/paths';
import { addressKeys, type ChainServices } from '../runtime/chain-services';
import { RESOLUTION_ACTIONS, type ResolutionAction, type ResolutionRequest } from '../domain/operators/pure/operator-resolution';
import { connectTemporalGateway, type TemporalGateway } from '../temporal/gateway';

/**
 * The networks as the service reaches them: with the bundled environments file, the sandbox network
 * is the embedded chain at EMBEDDED_ANVIL_PORT (what `npm start` runs, or a test's own anvil); an
 * ENVIRONMENTS_FILE of a deployment says where each network is.
 */
function serviceEnvironments(config: ServiceConfig) {
  const { environments, leftOut } = loadEnvironmentsReport(config.environmentsFile, { rpcUrls: config.rpcUrls });
  // A production command (a reconciliation, say) must not skip a chain the service runs.
  if (config.deployment === 'production' && leftOut.length > 0) {
    throw new Error(`no RPC URL for ${leftOut.map((n) => `network ${n.code}: set ${n.setting}`).join('; ')}`);
  }
  const sandbox = environments.environments.sandbox.networks[0];
  if (!config.environmentsFile && sandbox) {
    return withRpcUrl(environments, sandbox.chainId, `http://127.0.0.1:${config.anvil.embeddedPort}`);
  }
  return environments;
}

/** The chain clients alone (no custody): what an operator resolution verifies against. */
export function chainsFor(config: ServiceConfig): ChainRegistry {
  return createChainRegistry(serviceEnvironments(config));
}

/**
 * What a command runs with: the environment it was started with (a test runs commands in its own
 * process, against its own database and chain) and the config parsed from it.
 */
export interface CliContext {
  env: NodeJS.ProcessEnv;
  config(): ServiceConfig;
  /** A diagnostic on stderr (stdout carries only the command's one JSON object). */
  warn(message: string): void;
}

export function cliContext(env: NodeJS.ProcessEnv, stderr: { write(text: string): unknown }): CliContext {
  return { env, config: () => loadConfig(env), warn: (message) => void stderr.write(`${message}\n`) };
}

/** The command ran and found a problem: its result is still printed (one JSON object), and it exits 1. */
export class CommandFailed extends Error {
  constructor(
    message: string,
    readonly result: unknown,
  ) {
    super(message);
  }
}

export type Command = (argv: string[], ctx: CliContext) => Promise<unknown>;
export type Register = (name: string, command: Command) => void;

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
  if (action === 'mark-settled' && !/^0x[0-9a-fA-F]{64}$/.test(values.tx ?? ''))
    throw new Error('mark-settled needs --tx <0x… transaction hash>');
  if (action === 'fail' && !values.reason) throw new Error('fail needs --reason <text>');
  return {
    id,
    action,
    ...(values.tx ? { txHash: values.tx } : {}),
    ...(values.reason ? { reason: values.reason } : {}),
    actor: values.actor ?? `cli:${os.userInfo().username}`,
  };
}

/**
 * The chains and the address book the service runs with: the networks (serviceEnvironments) and the
 * custody public keys as the API reads them (CUSTODY_PUBLIC_KEYS, or the sandbox's
 * <DATA_DIR>/custody/public-keys.txt). Operator commands sign nothing, so they never read the seed.
 */
export function serviceChains(config: ServiceConfig, env: NodeJS.ProcessEnv = process.env): ChainServices {
  return {
    chains: createChainRegistry(serviceEnvironments(config)),
    ...addressKeys({ deployment: config.deployment, dataDir: dataDir(env), env }),
  };
}
