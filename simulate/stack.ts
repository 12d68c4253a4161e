import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { loadConfig, type ServiceConfig } from '../src/config';
import { loadEnvironments, withRpcUrl, type TEnvironments } from '../src/config/environments';
import type { Database } from '../src/db/client';
import { startAnvil } from '../src/embedded/anvil';
import { logsDir, postgresDataDir } from '../src/embedded/paths';
import { projectRoot } from '../src/platform/project-root';
import { startTemporalDevServer } from '../src/embedded/temporal-dev-server';
import { clusterPostgresOf, startTemporalCluster } from '../src/embedded/temporal-cluster';
import { CLUSTER_ROLES } from '../src/embedded/temporal-cluster-config';
import { freePort } from '../src/embedded/process';
import { ensureSandboxToken } from '../src/chain/sandbox';
import { createApi } from '../src/http/app';
import { composeService } from '../src/runtime/composition';
import { randomBytes } from 'node:crypto';
import { HttpOfframpProvider } from '../src/offramp/http-provider';
import { launchSandboxProvider } from '../src/offramp/sandbox-provider/launch';
import { createLogger } from '../src/logger';
import { openDatabase } from '../src/runtime/database';
import { resolveServiceSecret } from '../src/runtime/service-secret';
import { createChainServices, fundSandboxTreasury, type ChainServices } from '../src/runtime/chain-services';
import { registerServiceWallets } from '../src/domain/chain/custody-addresses';
import { connectTemporalGateway, type TemporalGateway } from '../src/temporal/gateway';

/**
 * The embedded stack as `npm start` runs it (PostgreSQL, the Temporal dev server, anvil with a block a
 * second, the API), except that the worker is a child process of its own, in the production shape
 * (`src/main.ts --only worker` with DATABASE_URL and TEMPORAL_ADDRESS), so it can be killed with
 * SIGKILL and started again. Every run starts from nothing: a fresh database, Temporal store and chain.
 * The crash matrix (simulate/crash-matrix.ts) runs on it too, and starts an API process of its own
 * (`serviceProcess('api', ...)`) to kill mid-request.
 */

export interface StackPorts {
  postgres: number;
  temporal: number;
  temporalUi: number;
  anvil: number;
  api: number;
}

export interface Stack {
  config: ServiceConfig;
  environments: TEnvironments;
  db: Database;
  engine: TemporalGateway;
  chain: ChainServices;
  chainId: number;
  rpcUrl: string;
  apiUrl: string;
  temporalAddress: string;
  uiUrl: string | undefined;
  dataDir: string;
  serviceSecret: string;
  worker: ServiceProcess;
  /** The environment a service process of this stack runs with (database, Temporal, networks, data). */
  serviceEnv: Record<string, string>;
  /** SIGSTOP on PostgreSQL (postmaster first, then its backends) for `ms`, then SIGCONT. */
  pausePostgres(ms: number): Promise<number>;
  /** SIGSTOP on the Temporal dev server for `ms`, then SIGCONT. */
  pauseTemporal(ms: number): Promise<void>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function startStack(opts: {
  config: ServiceConfig;
  dataDir: string;
  ports: StackPorts;
  log: (line: string) => void;
  /** Default partner_payments_simulation; each user of the shared cluster its own. */
  databaseName?: string;
  /** Extra settings of the worker (and other service processes), e.g. for a local webhook receiver. */
  serviceEnv?: Record<string, string>;
  /** Default true; false leaves starting it (with settings of the caller's choosing) to the caller. */
  startWorker?: boolean;
  /** `dev` (default): the Temporal CLI's dev server on SQLite; `cluster`: Temporal Server's four roles over PostgreSQL. */
  temporalEngine?: TemporalEngine;
  /** Runs the sandbox off-ramp provider (bank payouts) in a process of its own, for the API and every service process. */
  sandboxProvider?: boolean;
}): Promise<Stack> {
  const { config, dataDir, ports, log } = opts;
  const stops: Array<() => Promise<void>> = [];
  const paused = new Set<number>();
  const stop = async () => {
    // Never leave a process stopped behind us, whatever failed.
    for (const pid of paused) signal(pid, 'SIGCONT');
    for (const s of stops.splice(0).reverse()) await s().catch((err: unknown) => log(`stop failed: ${String(err)}`));
  };
  try {
    // This process runs the API (the worker is a process of its own): the API's pool settings.
    const opened = await openDatabase(config, {
      databaseName: opts.databaseName ?? 'partner_payments_simulation',
      fresh: true,
      role: 'api',
    });
    stops.push(() => opened.close());
    log(`postgres ${redact(opened.url)}`);

    const temporal = await startTemporal(opts.temporalEngine ?? 'dev', {
      dataDir,
      ports,
      namespace: config.temporal.namespace,
      databaseUrl: opened.url,
      databaseName: opts.databaseName ?? 'partner_payments_simulation',
    });
    stops.push(() => temporal.stop());
    log(`temporal ${temporal.address}${temporal.uiUrl ? ` (UI ${temporal.uiUrl})` : ''} (${opts.temporalEngine ?? 'dev'})`);

    let environments = loadEnvironments(config.environmentsFile);
    const network = environments.environments.sandbox.networks[0];
    if (!network) throw new Error('the sandbox environment configures no network');
    // In memory: every run starts on an empty chain.
    // On a port of its own choosing unless one was asked for: a free port picked at set-up can be taken
    // by then (other stacks and test servers start at the same time).
    const anvil = await startAnvil({ port: process.env.EMBEDDED_ANVIL_PORT ? ports.anvil : 0, chainId: network.chainId, blockTime: 1 });
    ports.anvil = anvil.port;
    stops.push(() => anvil.stop());
    await ensureSandboxToken({ rpcUrl: anvil.rpcUrl });
    environments = withRpcUrl(environments, network.chainId, anvil.rpcUrl);
    log(`anvil ${anvil.rpcUrl} (chain ${network.chainId}, a block a second)`);
    // The worker reads its networks from a file, as production does.
    const environmentsFile = path.join(dataDir, 'environments.json');
    writeFileSync(environmentsFile, `${JSON.stringify(environments, null, 2)}\n`);

    const serviceSecret = resolveServiceSecret(config.serviceSecret, dataDir);
    const chain = createChainServices(environments, dataDir);
    await fundSandboxTreasury(chain, anvil.rpcUrl);
    await registerServiceWallets(opened.db.prisma, chain.custody);

    const engine = await connectTemporalGateway({
      address: temporal.address,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
    });
    stops.push(() => engine.close());
    const offramp = opts.sandboxProvider ? await startOfframp(config, dataDir, anvil.rpcUrl, network.chainId, ports.api, stops) : undefined;
    if (offramp) log(`sandbox off-ramp provider ${offramp.env.OFFRAMP_PROVIDER_URL}`);

    const serviceEnv = {
      DEPLOYMENT: 'sandbox',
      DATABASE_URL: opened.url,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: config.temporal.namespace,
      TEMPORAL_TASK_QUEUE: config.temporal.taskQueue,
      ENVIRONMENTS_FILE: environmentsFile,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ...offramp?.env,
      ...opts.serviceEnv,
    };
    const worker = new ServiceProcess('worker', serviceEnv);
    stops.push(() => worker.stop());
    if (opts.startWorker !== false) worker.start();

    const apiLog = createWriteStream(path.join(logsDir(), 'api.log'), { flags: 'a' });
    stops.push(() => new Promise<void>((resolve) => apiLog.end(() => resolve())));
    // The client API (vault funding), refunds and recoveries and the provider's callbacks, as `npm start` wires them.
    const service = composeService({
      config,
      environments,
      logger: createLogger('warn', apiLog),
      serviceSecret,
      chains: chain.chains,
      addressBook: chain.addressBook,
      engine,
      ...(offramp ? { offramp: offramp.provider } : {}),
    });
    const api = createApi(service.api({ db: opened.db, ...(temporal.uiUrl ? { temporalUiUrl: temporal.uiUrl } : {}) }));
    const server: Server = await new Promise((resolve) => {
      const s = api.listen(ports.api, '127.0.0.1', () => resolve(s));
    });
    stops.push(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    log(`api ${apiUrl}`);

    const pgDir = realpathSync(postgresDataDir());
    return {
      config,
      environments,
      // The run's own checks and drives (posting a vault receipt, reading the books) act as the worker does, not as the API.
      db: opened.pool('worker'),
      engine,
      chain,
      chainId: network.chainId,
      rpcUrl: anvil.rpcUrl,
      apiUrl,
      temporalAddress: temporal.address,
      uiUrl: temporal.uiUrl,
      dataDir,
      serviceSecret,
      worker,
      serviceEnv,
      async pausePostgres(ms) {
        const postmaster = Number(readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
        // The postmaster first, so it forks no backend we would miss; its children after.
        const pids = [postmaster, ...childrenOf(postmaster)];
        for (const pid of pids) {
          paused.add(pid);
          signal(pid, 'SIGSTOP');
        }
        try {
          await sleep(ms);
        } finally {
          for (const pid of [...pids].reverse()) {
            signal(pid, 'SIGCONT');
            paused.delete(pid);
          }
        }
        return pids.length;
      },
      async pauseTemporal(ms) {
        const pids = temporal.pids();
        for (const pid of pids) {
          paused.add(pid);
          signal(pid, 'SIGSTOP');
        }
        try {
          await sleep(ms);
        } finally {
          for (const pid of pids) {
            signal(pid, 'SIGCONT');
            paused.delete(pid);
          }
        }
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

export type TemporalEngine = 'dev' | 'cluster';

interface StackTemporal {
  address: string;
  uiUrl: string | undefined;
  /** Its processes (the dev server's one, or each role of the cluster), to pause them. */
  pids(): number[];
  stop(): Promise<void>;
}

/** A fresh Temporal store on the engine asked for: workflows of an earlier run would wake up against an empty database. */
async function startTemporal(
  engine: TemporalEngine,
  o: { dataDir: string; ports: StackPorts; namespace: string; databaseUrl: string; databaseName: string },
): Promise<StackTemporal> {
  if (engine === 'cluster') {
    if (o.namespace !== 'default') throw new Error(`the cluster engine serves the default namespace only (asked for ${o.namespace})`);
    const cluster = await startTemporalCluster({
      postgres: clusterPostgresOf(o.databaseUrl),
      frontendPort: o.ports.temporal,
      databases: { default: `${o.databaseName}_temporal`, visibility: `${o.databaseName}_temporal_visibility` },
      fresh: true,
      dir: path.join(o.dataDir, 'temporal-cluster'),
    });
    const pids = () => CLUSTER_ROLES.map((r) => cluster.pid(r)).filter((p): p is number => p !== undefined);
    return { address: cluster.address, uiUrl: undefined, pids, stop: () => cluster.stop() };
  }
  rmSync(path.join(o.dataDir, 'temporal'), { recursive: true, force: true });
  const dev = await startTemporalDevServer({
    port: o.ports.temporal,
    uiPort: o.ports.temporalUi,
    dbFile: path.join(o.dataDir, 'temporal', 'temporal.db'),
    namespaces: [o.namespace],
  });
  if (!dev.started || dev.pid === undefined) {
    await dev.stop();
    throw new Error(`a Temporal server already answers on ${dev.address}; pick another EMBEDDED_TEMPORAL_PORT`);
  }
  const pid = dev.pid;
  return { address: dev.address, uiUrl: dev.uiUrl, pids: () => [pid], stop: () => dev.stop() };
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err; // gone already: nothing to pause
  }
}

/** Direct children of a process, from /proc (Linux). */
function childrenOf(parent: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) children.push(Number(entry));
    } catch {
      /* exited meanwhile */
    }
  }
  return children;
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]+@/, '//$1:***@');
}

export type ServiceRole = 'worker' | 'api';

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * A role of the service as its own process: `node --import tsx src/main.ts --only <role>`, or as
 * production starts it, `node dist/src/main.js --only <role>` (one process either way, so SIGKILL really
 * kills it, with no wrapper left to forward signals). Output goes to <data>/logs/<name>.log (the
 * name defaults to the role). Each start may add settings (the crash matrix's CRASH_AT).
 */
export class ServiceProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<ProcessExit> = Promise.resolve({ code: 0, signal: null });
  private readyPromise: Promise<void> = Promise.resolve();
  private readonly log: WriteStream;
  starts = 0;
  kills = 0;
  /** Set by kill9() and halt(): the exit that follows is the caller's doing, not a crash. */
  private ending = false;
  /** Called when the process ends by itself (a crash): a supervisor may start it again. */
  onCrash: ((exit: ProcessExit) => void) | undefined;

  readonly name: string;
  private readonly entry: 'source' | 'dist';

  constructor(
    readonly role: ServiceRole,
    private readonly env: Record<string, string>,
    opts: { name?: string; entry?: 'source' | 'dist' } = {},
  ) {
    this.name = opts.name ?? role;
    this.entry = opts.entry ?? 'source';
    this.log = createWriteStream(this.logFile, { flags: 'a' });
  }

  get logFile(): string {
    return path.join(logsDir(), `${this.name}.log`);
  }

  start(extraEnv: Record<string, string> = {}): void {
    if (this.child) throw new Error(`the ${this.name} is running already`);
    this.starts += 1;
    const extra = Object.entries(extraEnv)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    this.log.write(`\n--- ${new Date().toISOString()} ${this.name} start #${this.starts}${extra ? ` (${extra})` : ''}\n`);
    const main =
      this.entry === 'dist'
        ? [path.join(projectRoot(), 'dist', 'src', 'main.js')]
        : ['--import', 'tsx', path.join(projectRoot(), 'src', 'main.ts')];
    const child = spawn(process.execPath, [...main, '--only', this.role], {
      cwd: projectRoot(),
      // Several API processes run side by side here: each admin listener takes a port of the system's choosing.
      env: { ...process.env, ADMIN_PORT: '0', ...this.env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.ending = false;
    child.stdout?.pipe(this.log, { end: false });
    child.stderr?.pipe(this.log, { end: false });
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    this.readyPromise = new Promise((resolve, reject) => {
      let seen = '';
      // main.ts prints this line once the role runs (the worker: it polls, the scanners run and the schedules exist).
      child.stdout?.on('data', (chunk: Buffer) => {
        seen = (seen + chunk.toString('utf8')).slice(-4096);
        if (seen.includes('is running')) resolve();
      });
      child.once('exit', (code, sig) =>
        reject(new Error(`the ${this.name} exited (${sig ?? code}) before it was ready; see ${this.logFile}`)),
      );
    });
    // Nobody may be waiting for it yet (it is killed before it is ready): not an unhandled rejection.
    this.readyPromise.catch(() => undefined);
    void this.exited.then((exit) => {
      if (this.child === child) this.child = undefined;
      if (!this.ending) this.onCrash?.(exit);
    });
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  async ready(timeoutMs = 120_000): Promise<void> {
    await withTimeout(this.readyPromise, timeoutMs, `the ${this.name} was not ready within ${timeoutMs} ms`);
  }

  /** How the current (or last) process ended; rejects after `timeoutMs` if it is still running. */
  exit(timeoutMs: number): Promise<ProcessExit> {
    return withTimeout(this.exited, timeoutMs, `the ${this.name} still runs after ${timeoutMs} ms`);
  }

  /** kill -9: no shutdown, activities in flight are abandoned mid-step. */
  async kill9(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.kills += 1;
    this.ending = true;
    this.log.write(`\n--- ${new Date().toISOString()} ${this.name} kill -9 (pid ${child.pid})\n`);
    child.kill('SIGKILL');
    await this.exited;
  }

  /** A clean stop (SIGTERM: the worker finishes its activities), SIGKILL after 30 s; the log stays open. */
  async halt(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.ending = true;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await this.exited;
    clearTimeout(timer);
  }

  /** halt(), then the log is closed: the last call. */
  async stop(): Promise<void> {
    await this.halt();
    await new Promise<void>((resolve) => this.log.end(() => resolve()));
  }
}

async function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The sandbox off-ramp provider, as `npm start` runs it: its own process on the stack's chain, callbacks to the API. */
async function startOfframp(
  config: ServiceConfig,
  dataDir: string,
  rpcUrl: string,
  chainId: number,
  apiPort: number,
  stops: Array<() => Promise<void>>,
) {
  const callbackSecret = randomBytes(32).toString('hex');
  const providerDir = path.join(dataDir, 'sandbox-provider');
  rmSync(providerDir, { recursive: true, force: true }); // the chain is new: so are its payouts
  const launched = await launchSandboxProvider({
    port: await freePort(),
    dataDir: providerDir,
    logFile: path.join(logsDir(), 'sandbox-provider.log'),
    rpcUrl,
    chainId,
    callbackUrl: `http://127.0.0.1:${apiPort}/v2/providers/sandbox/callbacks`,
    callbackSecret,
  });
  stops.push(() => launched.stop());
  return {
    provider: new HttpOfframpProvider({ baseUrl: launched.url, callbackSecret, timeoutMs: config.offramp.timeoutMs }),
    env: { OFFRAMP_PROVIDER_URL: launched.url, OFFRAMP_CALLBACK_SECRET: callbackSecret },
  };
}

/**
 * Reads the environment once for a run on its own stack (the simulation, the crash matrix): its data
 * folder (DATA_DIR, else `defaultDataDir`; logs, the PostgreSQL cluster and the custody seed live there,
 * and so does every process it starts), its ports (each from its variable or a free one), the cluster
 * (set up when missing) and the configuration. A DATABASE_URL or TEMPORAL_ADDRESS in the caller's
 * environment must not point the run elsewhere: both are ignored.
 */
export async function stackSettings(opts: {
  defaultDataDir: string;
  overrides?: Record<string, string>;
}): Promise<{ dataDir: string; ports: StackPorts; config: ServiceConfig }> {
  const env = process.env;
  const dataDir = path.resolve(projectRoot(), env.DATA_DIR ?? opts.defaultDataDir);
  env.DATA_DIR = dataDir;
  const port = async (name: string) => (env[name] ? Number(env[name]) : freePort());
  const ports: StackPorts = {
    postgres: await port('EMBEDDED_POSTGRES_PORT'),
    temporal: await port('EMBEDDED_TEMPORAL_PORT'),
    temporalUi: await port('TEMPORAL_UI_PORT'),
    anvil: await port('EMBEDDED_ANVIL_PORT'),
    api: await port('PORT'),
  };
  const embeddedEnv = { ...env };
  delete embeddedEnv.DATABASE_URL;
  delete embeddedEnv.TEMPORAL_ADDRESS;
  if (!existsSync(path.join(postgresDataDir(), 'PG_VERSION'))) {
    // The run's own PostgreSQL cluster (the simulation pauses it with SIGSTOP, so never one shared with `npm start`).
    const setup = spawnSync(process.execPath, [path.join(projectRoot(), 'scripts', 'setup.mjs'), '--for', 'start'], {
      env: { ...embeddedEnv, EMBEDDED_POSTGRES_PORT: String(ports.postgres) },
      stdio: 'inherit',
    });
    if (setup.status !== 0) throw new Error(`set-up of the PostgreSQL cluster in ${dataDir} failed`);
  }
  const config = loadConfig({
    ...embeddedEnv,
    EMBEDDED_POSTGRES_PORT: String(ports.postgres),
    EMBEDDED_TEMPORAL_PORT: String(ports.temporal),
    TEMPORAL_UI_PORT: String(ports.temporalUi),
    EMBEDDED_ANVIL_PORT: String(ports.anvil),
    PORT: String(ports.api),
    LOG_LEVEL: 'warn',
    ...opts.overrides,
  });
  return { dataDir, ports, config };
}
