import { readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Address } from 'viem';
import type { ServiceConfig } from '../../src/config';
import type { TEnvironments } from '../../src/config/environments';
import { createDatabase, type Database } from '../../src/db/client';
import { applyMigrations } from '../../src/db/migrate';
import { startAnvil, type AnvilNode } from '../../src/embedded/anvil';
import { logsDir, postgresDataDir } from '../../src/embedded/paths';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/embedded/postgres';
import { freePort } from '../../src/embedded/process';
import { startTemporalCluster, type TemporalCluster } from '../../src/embedded/temporal-cluster';
import { catalogTokenAddress, placeTestTokenAt } from '../../src/chain/sandbox';
import { catalogNetwork } from '../../src/chain/network-catalog';
import { createChainRegistry } from '../../src/chain/registry';
import { registerServiceWallets } from '../../src/domain/chain/custody-addresses';
import { deriveKey } from '../../src/platform/secrets';
import { launchSandboxProvider } from '../../src/offramp/sandbox-provider/launch';
import { addressKeys, fundSandboxTreasury, type ChainServices } from '../../src/runtime/chain-services';
import { resolveServiceSecret } from '../../src/runtime/service-secret';
import { connectTemporalGateway, type TemporalGateway } from '../../src/temporal/gateway';
import { ServiceProcess } from '../stack';
import { until } from '../until';
import {
  assertProductionShape,
  BASE_SEPOLIA_CHAIN_ID,
  createSeedWithCli,
  hostAddress,
  productionEnv,
  REHEARSAL_NETWORKS,
  type Tls,
} from './production';

/**
 * Production on one machine: PostgreSQL, a Temporal cluster over it (frontend, two history processes
 * sharing the shards, matching and worker, each its own process), three chains by catalog code (Base
 * Sepolia for the sandbox app, Base and Ethereum for the production app), the sandbox off-ramp
 * provider, and the service as production runs it (simulate/rehearsal/production.ts): two API and two
 * worker processes started from the build (`node dist/src/main.js --only api|worker`) with
 * `DEPLOYMENT=production`. This process is the operator: it holds the public keys only, reads the
 * database and the chains to check, and kills and restarts the parts.
 */

export interface RehearsalChain {
  /** The catalog code (`base-sepolia`, `base`, `ethereum`). */
  code: string;
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
  /** The operator CLI's settings: the service's, with the worker's database login and no seed. */
  serviceEnv: Record<string, string>;
  /** Where the sandbox off-ramp provider keeps its own records (its state.json). */
  providerDir: string;
  /** SIGKILL of the postmaster, then started again on the same port once its orphans are gone: crash recovery. */
  crashPostgres(): Promise<{ downMs: number; recovered: boolean }>;
  stop(): Promise<void>;
}

const DATABASE = 'partner_payments_rehearsal';
const PROCESSES = 2;
/** History processes sharing the shards: killing one hands its shards to the other (docker-compose.yml runs as many). */
export const HISTORY_PROCESSES = 2;

export async function startRehearsalStack(opts: {
  config: ServiceConfig;
  dataDir: string;
  postgresPort: number;
  temporalPort: number;
  /** `host:port` of each partner's webhook receiver (https, the certificate in `tls`). */
  receivers: string[];
  tls: Tls;
  log: (line: string) => void;
}): Promise<RehearsalStack> {
  const { config, dataDir, log } = opts;
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s().catch((err: unknown) => log(`stop failed: ${String(err)}`));
  };
  try {
    const custody = createSeedWithCli(path.join(dataDir, 'custody-secret'));
    log(`custody seed made by \`custody create-seed\` in ${custody.seedFile}; the APIs get only its public keys`);
    const postgres = new OwnPostgres(opts.postgresPort);
    const pg = await postgres.start();
    stops.push(() => postgres.stop());
    const dbUrl = await pg.ensureDatabase(DATABASE, { fresh: true });
    // Migrated and granted here, as the owner, before any service starts (compose's migrate step).
    const roles = await pg.ensureRoles();
    await applyMigrations(dbUrl, { grants: roles });
    const db = createDatabase({ url: dbUrl, poolMax: 5, acquireTimeoutMs: 10_000 });
    stops.push(() => db.close());
    log(`postgres 127.0.0.1:${pg.port}`);

    const cluster = await startTemporalCluster({
      postgres: { host: pg.host, port: pg.port, user: 'postgres' },
      frontendPort: opts.temporalPort,
      historyProcesses: HISTORY_PROCESSES,
      databases: { default: `${DATABASE}_temporal`, visibility: `${DATABASE}_temporal_visibility` },
      fresh: true,
      dir: path.join(dataDir, 'temporal-cluster'),
    });
    stops.push(() => cluster.stop());
    log(`temporal cluster ${cluster.address} (${cluster.members.join(', ')}; ${cluster.historyShards} history shards)`);

    const { chains, stopChains } = await startChains(log);
    stops.push(stopChains);
    const serviceSecret = resolveServiceSecret(config.serviceSecret, dataDir);
    const callbackSecret = Buffer.from(deriveKey(serviceSecret, 'offramp-callback-secret')).toString('hex');
    const apiPorts = [await freePort(), await freePort()];
    const apiUrls = apiPorts.map((p) => `http://127.0.0.1:${p}`);
    const sandbox = chains.find((c) => c.environment === 'sandbox')!;
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
      tokenAddress: sandbox.token,
      // As a load balancer would route them: to an API process the rehearsal does not kill.
      callbackUrl: `${apiUrls[1]}/v2/providers/sandbox/callbacks`,
      callbackSecret,
      env: { LOG_LEVEL: 'warn' },
    });
    stops.push(() => provider.stop());
    log(`sandbox off-ramp provider ${provider.url}`);

    const env = productionEnv({
      dataDir,
      databaseUrls: { api: pg.url(DATABASE, roles.api), worker: pg.url(DATABASE, roles.worker) },
      temporalAddress: cluster.address,
      temporal: config.temporal,
      serviceSecret,
      custody,
      rpcUrls: Object.fromEntries(chains.map((c) => [c.code, c.rpcUrl])),
      offramp: { url: provider.url, callbackSecret },
      receivers: opts.receivers,
      tls: opts.tls,
    });
    const environments = assertProductionShape(env);
    log(`production check passed for the API and the worker (${env.catalogFile})`);
    const chain: ChainServices = {
      chains: createChainRegistry(environments),
      ...addressKeys({ deployment: 'production', dataDir, env: { CUSTODY_PUBLIC_KEYS: custody.publicKeys } }),
    };
    // The operator funds the gas treasury on each chain (here from anvil's funded account).
    for (const c of chains) await fundSandboxTreasury(chain, c.rpcUrl);
    await registerServiceWallets(db.prisma, chain.addressBook);
    const engine = await connectTemporalGateway({
      address: cluster.address,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
    });
    stops.push(() => engine.close());

    const workers = Array.from(
      { length: PROCESSES },
      (_, i) => new ServiceProcess('worker', env.worker, { name: `worker-${i + 1}`, entry: 'dist' }),
    );
    const apis = apiPorts.map(
      (port, i) => new ServiceProcess('api', { ...env.api, PORT: String(port) }, { name: `api-${i + 1}`, entry: 'dist' }),
    );
    const crashes = superviseServices([...workers, ...apis], stops, log);
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
      serviceEnv: env.operator,
      providerDir,
      crashPostgres: () => postgres.crash(),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Starts each process; one that ends by itself is started again, as a supervisor (`restart: unless-stopped`) would. */
function superviseServices(processes: ServiceProcess[], stops: Array<() => Promise<void>>, log: (line: string) => void): Crash[] {
  const crashes: Crash[] = [];
  for (const p of processes) {
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
  return crashes;
}

/** The last line of a log that names an error (a stack's frames skipped). */
function lastError(logFile: string): string {
  const lines = readFileSync(logFile, 'utf8').split('\n').slice(-400).reverse();
  return (lines.find((l) => /error/i.test(l) && !/^\s+at /.test(l)) ?? 'no error in its log').trim().slice(0, 300);
}

/**
 * The run's own PostgreSQL cluster, started here: a crash must kill what this process started, nothing
 * else's. A crash is a SIGKILL of the postmaster: its backends notice and exit, and the next start
 * replays the WAL (crash recovery), which its log says.
 */
class OwnPostgres {
  private pg: EmbeddedPostgres | undefined;

  constructor(private readonly port: number) {}

  async start(): Promise<EmbeddedPostgres> {
    const pg = await startEmbeddedPostgres({ port: this.port });
    if (!pg.started)
      throw new Error(`a PostgreSQL cluster already runs on this DATA_DIR (port ${pg.port}); stop it first: the rehearsal crashes its own`);
    if (pg.port !== this.port)
      throw new Error(`PostgreSQL came up on port ${pg.port}, not ${this.port}: the services' DATABASE_URL no longer reaches it`);
    this.pg = pg;
    return pg;
  }

  stop(): Promise<void> {
    return this.pg?.stop() ?? Promise.resolve();
  }

  async crash(): Promise<{ downMs: number; recovered: boolean }> {
    const t0 = Date.now();
    const log = path.join(logsDir(), 'postgres.log');
    const logFrom = statSync(log, { throwIfNoEntry: false })?.size ?? 0;
    const pid = postmasterPid();
    process.kill(pid, 'SIGKILL');
    // Until the orphaned backends have gone: while one holds the shared memory, a new postmaster refuses to start.
    await until(`PostgreSQL started again after its postmaster (pid ${pid}) was killed`, 120_000, async () => {
      try {
        return await this.start();
      } catch {
        return undefined;
      }
    });
    const recovered = /automatic recovery in progress|was interrupted/.test(readFileSync(log, 'utf8').slice(logFrom));
    return { downMs: Date.now() - t0, recovered };
  }
}

function postmasterPid(): number {
  const pid = Number(readFileSync(path.join(postgresDataDir(), 'postmaster.pid'), 'utf8').split('\n')[0]);
  if (!pid) throw new Error(`no postmaster pid in ${postgresDataDir()}/postmaster.pid`);
  return pid;
}

/** The three chains by catalog code, a block a second each, on this machine's non-loopback address; USDC and EURC at the catalog's addresses. */
async function startChains(log: (line: string) => void): Promise<{ chains: RehearsalChain[]; stopChains: () => Promise<void> }> {
  const host = hostAddress();
  const planned = [
    ...REHEARSAL_NETWORKS.sandbox.map((code) => ({ code, environment: 'sandbox' as const })),
    ...REHEARSAL_NETWORKS.production.map((code) => ({ code, environment: 'production' as const })),
  ];
  const nodes: AnvilNode[] = [];
  const stopChains = async () => void (await Promise.all(nodes.map((n) => n.stop())));
  try {
    const chains: RehearsalChain[] = [];
    for (const p of planned) {
      const chainId = catalogNetwork(p.code)!.chainId;
      const node = await startAnvil({ port: 0, host, chainId, blockTime: 1 });
      nodes.push(node);
      const token = catalogTokenAddress(p.code, 'USDC');
      await placeTestTokenAt({ rpcUrl: node.rpcUrl, addresses: [token, catalogTokenAddress(p.code, 'EURC')] });
      chains.push({ code: p.code, chainId, rpcUrl: node.rpcUrl, token, environment: p.environment });
    }
    if (chains[0]?.chainId !== BASE_SEPOLIA_CHAIN_ID)
      throw new Error('the sandbox chain must be Base Sepolia (the vaults are configured there)');
    log(`chains ${chains.map((c) => `${c.code} ${c.chainId} (${c.environment}) ${c.rpcUrl}`).join(', ')}, a block a second`);
    return { chains, stopChains };
  } catch (err) {
    await stopChains();
    throw err;
  }
}
