import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Address } from 'viem';
import type { ServiceConfig } from '../../src/config';
import { loadEnvironments, withRpcUrl, type TEnvironments } from '../../src/config/environments';
import { createDatabase, type Database } from '../../src/db/client';
import { applyMigrations } from '../../src/db/migrate';
import { startAnvil } from '../../src/embedded/anvil';
import { logsDir } from '../../src/embedded/paths';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/embedded/postgres';
import { freePort } from '../../src/embedded/process';
import { startTemporalCluster, type TemporalCluster } from '../../src/embedded/temporal-cluster';
import { realToken, startTwoChains, TWO_CHAINS, withTwoChainProduction } from '../../src/embedded/two-chains';
import { ensureSandboxToken, SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { registerServiceWallets } from '../../src/domain/chain/custody-addresses';
import { deriveKey } from '../../src/platform/secrets';
import { launchSandboxProvider } from '../../src/offramp/sandbox-provider/launch';
import { createChainServices, fundSandboxTreasury, type ChainServices } from '../../src/runtime/chain-services';
import { resolveServiceSecret } from '../../src/runtime/service-secret';
import { connectTemporalGateway, type TemporalGateway } from '../../src/temporal/gateway';
import { ServiceProcess } from '../stack';

/**
 * Production on one machine: PostgreSQL, a Temporal cluster over it (four roles, each its own
 * process), three chains (the sandbox chain, and Base- and Ethereum-shaped chains for the production
 * environment), the sandbox off-ramp provider, and the service as production runs it: two API and two
 * worker processes started from the build (`node dist/src/main.js --only api|worker`). This process
 * is the operator: it reads the database and the chains to check, and kills and restarts the parts.
 */

export interface RehearsalChain {
  chainId: number;
  rpcUrl: string;
  token: Address;
  environment: 'sandbox' | 'production';
}

/** A service process that ended by itself, started again as a supervisor (`restart: unless-stopped`) would. */
export interface Crash {
  name: string;
  at: number;
  /** When it printed its ready line again (unset: never). */
  backAt?: number;
  exit: string;
  /** The last error line of its log. */
  cause: string;
}

export interface RehearsalStack {
  config: ServiceConfig;
  environments: TEnvironments;
  db: Database;
  chain: ChainServices;
  engine: TemporalGateway;
  cluster: TemporalCluster;
  chains: RehearsalChain[];
  apis: ServiceProcess[];
  apiUrls: string[];
  workers: ServiceProcess[];
  crashes: Crash[];
  serviceSecret: string;
  /** The settings every service process runs with. */
  serviceEnv: Record<string, string>;
  /** pg_ctl stop -m fast, then start again on the same port; answers how long it was down (ms). */
  restartPostgres(): Promise<number>;
  stop(): Promise<void>;
}

const DATABASE = 'partner_payments_rehearsal';
const PROCESSES = 2;

export async function startRehearsalStack(opts: {
  config: ServiceConfig;
  dataDir: string;
  postgresPort: number;
  temporalPort: number;
  log: (line: string) => void;
}): Promise<RehearsalStack> {
  const { config, dataDir, log } = opts;
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s().catch((err: unknown) => log(`stop failed: ${String(err)}`));
  };
  try {
    let pg = await startOwnPostgres(opts.postgresPort);
    stops.push(() => pg.stop());
    const dbUrl = await pg.ensureDatabase(DATABASE, { fresh: true });
    await applyMigrations(dbUrl);
    const db = createDatabase({ url: dbUrl, poolMax: 5, acquireTimeoutMs: 10_000 });
    stops.push(() => db.close());
    log(`postgres 127.0.0.1:${pg.port}`);

    const cluster = await startTemporalCluster({
      postgres: { host: pg.host, port: pg.port, user: 'postgres' },
      frontendPort: opts.temporalPort,
      databases: { default: `${DATABASE}_temporal`, visibility: `${DATABASE}_temporal_visibility` },
      fresh: true,
      dir: path.join(dataDir, 'temporal-cluster'),
    });
    stops.push(() => cluster.stop());
    log(`temporal cluster ${cluster.address} (${cluster.historyShards} history shards)`);

    const { environments, chains, stopChains } = await startChains(config, log);
    stops.push(stopChains);
    const environmentsFile = path.join(dataDir, 'environments.json');
    writeFileSync(environmentsFile, `${JSON.stringify(environments, null, 2)}\n`);

    const serviceSecret = resolveServiceSecret(config.serviceSecret, dataDir);
    const chain = createChainServices(environments, dataDir);
    for (const c of chains) await fundSandboxTreasury(chain, c.rpcUrl);
    await registerServiceWallets(db.prisma, chain.addressBook);
    const engine = await connectTemporalGateway({
      address: cluster.address,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
    });
    stops.push(() => engine.close());

    const apiPorts = [await freePort(), await freePort()];
    const apiUrls = apiPorts.map((p) => `http://127.0.0.1:${p}`);
    const sandbox = chains.find((c) => c.environment === 'sandbox')!;
    const callbackSecret = Buffer.from(deriveKey(serviceSecret, 'offramp-callback-secret')).toString('hex');
    const providerDir = path.join(dataDir, 'sandbox-provider');
    // The chains are new, so are the provider's payouts: a payer's first transfer has the same hash
    // in every run, and a provider that remembers it refuses its funding as already used.
    rmSync(providerDir, { recursive: true, force: true });
    const provider = await launchSandboxProvider({
      port: await freePort(),
      dataDir: providerDir,
      logFile: path.join(logsDir(), 'sandbox-provider.log'),
      rpcUrl: sandbox.rpcUrl,
      chainId: sandbox.chainId,
      // As a load balancer would route them: to an API process the rehearsal does not kill.
      callbackUrl: `${apiUrls[1]}/v2/providers/sandbox/callbacks`,
      callbackSecret,
      env: { LOG_LEVEL: 'warn' },
    });
    stops.push(() => provider.stop());
    log(`sandbox off-ramp provider ${provider.url}`);

    const serviceEnv: Record<string, string> = {
      NODE_ENV: 'production',
      DEPLOYMENT: 'sandbox',
      DATABASE_URL: dbUrl,
      TEMPORAL_ADDRESS: cluster.address,
      TEMPORAL_NAMESPACE: config.temporal.namespace,
      TEMPORAL_TASK_QUEUE: config.temporal.taskQueue,
      ENVIRONMENTS_FILE: environmentsFile,
      DATA_DIR: dataDir,
      SERVICE_SECRET: serviceSecret,
      OFFRAMP_PROVIDER_URL: provider.url,
      OFFRAMP_CALLBACK_SECRET: callbackSecret,
      WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS: 'true',
      // One partner app sends the whole load: the per-credential quota is not under test.
      RATE_LIMIT_POINTS: '1000000',
      LOG_LEVEL: 'warn',
    };
    const workers = Array.from(
      { length: PROCESSES },
      (_, i) => new ServiceProcess('worker', serviceEnv, { name: `worker-${i + 1}`, entry: 'dist' }),
    );
    const apis = apiPorts.map(
      (port, i) => new ServiceProcess('api', { ...serviceEnv, PORT: String(port) }, { name: `api-${i + 1}`, entry: 'dist' }),
    );
    const crashes: Crash[] = [];
    for (const p of [...workers, ...apis]) {
      stops.push(() => p.stop());
      p.onCrash = (exit) => {
        const crash: Crash = { name: p.name, at: Date.now(), exit: String(exit.signal ?? exit.code), cause: lastError(p.logFile) };
        crashes.push(crash);
        log(`${p.name} exited by itself (${crash.exit}: ${crash.cause}); starting it again`);
        p.start();
        void p.ready().then(
          () => void (crash.backAt = Date.now()),
          () => undefined,
        );
      };
      p.start();
    }
    await Promise.all([...workers, ...apis].map((p) => p.ready()));
    log(`api ${apiUrls.join(', ')}; ${workers.length} workers`);

    return {
      config,
      environments,
      db,
      chain,
      engine,
      cluster,
      chains,
      apis,
      apiUrls,
      workers,
      crashes,
      serviceSecret,
      serviceEnv,
      async restartPostgres() {
        const t0 = Date.now();
        const port = pg.port;
        await pg.stop();
        pg = await startOwnPostgres(port);
        if (pg.port !== port)
          throw new Error(`PostgreSQL came back on port ${pg.port}, not ${port}: the services' DATABASE_URL no longer reaches it`);
        return Date.now() - t0;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The last line of a log that names an error (a stack's frames skipped). */
function lastError(logFile: string): string {
  const lines = readFileSync(logFile, 'utf8').split('\n').slice(-400).reverse();
  return (lines.find((l) => /error/i.test(l) && !/^\s+at /.test(l)) ?? 'no error in its log').trim().slice(0, 300);
}

/** The run's own cluster, started here: a restart must stop what this process started, nothing else's. */
async function startOwnPostgres(port: number): Promise<EmbeddedPostgres> {
  const pg = await startEmbeddedPostgres({ port });
  if (!pg.started)
    throw new Error(`a PostgreSQL cluster already runs on this DATA_DIR (port ${pg.port}); stop it first: the rehearsal restarts its own`);
  return pg;
}

/** The sandbox chain and the two production-shaped chains, a block a second each. */
async function startChains(
  config: ServiceConfig,
  log: (line: string) => void,
): Promise<{ environments: TEnvironments; chains: RehearsalChain[]; stopChains: () => Promise<void> }> {
  const loaded = loadEnvironments(config.environmentsFile);
  const network = loaded.environments.sandbox.networks[0];
  if (!network) throw new Error('the sandbox environment configures no network');
  const anvil = await startAnvil({ port: 0, chainId: network.chainId, blockTime: 1 });
  const two = await startTwoChains({ blockTime: 1 }).catch(async (err: unknown) => {
    await anvil.stop();
    throw err;
  });
  await ensureSandboxToken({ rpcUrl: anvil.rpcUrl });
  const environments = withTwoChainProduction(withRpcUrl(loaded, network.chainId, anvil.rpcUrl), two.networks);
  const chains: RehearsalChain[] = [
    { chainId: network.chainId, rpcUrl: anvil.rpcUrl, token: SANDBOX_TOKEN_ADDRESS, environment: 'sandbox' },
    ...TWO_CHAINS.map((c): RehearsalChain => ({
      chainId: c.chainId,
      rpcUrl: two.nodes[c.chainId].rpcUrl,
      token: realToken(c.chainId, 'USDC'),
      environment: 'production',
    })),
  ];
  log(`chains ${chains.map((c) => `${c.chainId} (${c.environment}) ${c.rpcUrl}`).join(', ')}, a block a second`);
  return { environments, chains, stopChains: async () => void (await Promise.all([anvil.stop(), two.stop()])) };
}
