import type { Server } from 'node:http';
import path from 'node:path';
import { ConfigError, type ServiceConfig } from '../config';
import { loginFacts, loginProblems } from '../db/roles';
import { withRpcUrl, type TEnvironments } from '../config/environments';
import { loadServiceEnvironments } from './service-environments';
import { deliveringEnvironments } from '../domain/webhooks/webhooks-module';
import type { Logger } from '../logger';
import { openDatabase, type OpenedDatabase } from './database';
import { resolveServiceKeys } from './service-secret';
import { dataDir } from '../embedded/paths';
import { startTemporalDevServer } from '../embedded/temporal-dev-server';
import { clusterPostgresOf, startTemporalCluster } from '../embedded/temporal-cluster';
import { CLUSTER_ROLES } from '../embedded/temporal-cluster-config';
import { startAnvil } from '../embedded/anvil';
import { ensureSandboxToken } from '../chain/sandbox';
import type Koa from 'koa';
import { createApi } from '../http/app';
import { createAdminApi } from '../http/admin-app';
import type { ApiState } from '../http/context';
import { connectTemporalGateway, workerWebhookStarter, type TemporalGateway } from '../temporal/gateway';
import { connectWorkerConnection, createWorker, installWorkerRuntime } from '../temporal/worker';
import { freePort } from '../embedded/process';
import { loadWorkflowBundle } from '../temporal/workflow-bundle';
import { createWebhookActivities } from '../../activities/webhooks';
import { DEFAULT_WEBHOOK_DISPATCHER } from '../../workflows/contracts/webhooks';
import { registerServiceWallets } from '../domain/chain/custody-addresses';
import { createChainRegistry } from '../chain/registry';
import { assertKeysMatchDatabase, fundSandboxTreasury, keysForRoles, type ChainServices } from './chain-services';
import { Lifecycle } from './lifecycle';
import { startWebhookKicks } from './webhook-kicks';
import { deriveKey } from '../platform/secrets';
import { HttpOfframpProvider } from '../offramp/http-provider';
import type { OfframpProvider } from '../offramp/offramp-provider';
import { composeService } from './composition';
import { launchSandboxProvider } from '../offramp/sandbox-provider/launch';

export type Role = 'api' | 'worker';

export interface RunningService {
  config: ServiceConfig;
  environments: TEnvironments;
  database: OpenedDatabase;
  engine: TemporalGateway;
  chain: ChainServices;
  temporalAddress: string;
  uiUrl?: string;
  rpcUrl?: string;
  apiUrl?: string;
  /** The admin plane (console, admin API, metrics), where the API runs. */
  adminUrl?: string;
  /** The off-ramp provider: OFFRAMP_PROVIDER_URL's, or the sandbox provider started here. */
  offramp?: OfframpProvider;
  /** The sandbox provider's base URL, when this process started it. */
  sandboxProviderUrl?: string;
  /** Where this process's worker runtime serves its Temporal metrics (the worker role only). */
  temporalMetricsUrl?: string;
  dataDir: string;
  stop(): Promise<void>;
  kill(): void;
}

/** How long a stop lets the API's in-flight requests finish before their connections are closed. */
const API_DRAIN_MS = 10_000;
/** How long a stop lets running activities finish and report before they are cancelled. */
const WORKER_DRAIN = '10 seconds';

/**
 * Starts the service: DATABASE_URL and TEMPORAL_ADDRESS when set (production shape), otherwise the
 * embedded PostgreSQL, Temporal dev server (with Web UI) and an anvil sandbox chain, all under .data/.
 * Whatever started is stopped again, in reverse order, by stop() — also when start-up fails midway.
 */
export async function startService(opts: {
  config: ServiceConfig;
  logger: Logger;
  roles: Role[];
  /** Seconds between scans of each chain (the scanner can also be poked). */
  scannerPollSeconds?: number;
  /** Seconds between sandbox blocks; 0 = automine only. */
  sandboxBlockTime?: number;
  /** Where the started parts are registered, so a signal during start-up stops them too. */
  lifecycle?: Lifecycle;
  /** Where DATA_DIR and the custody settings are read (CUSTODY_MNEMONIC_FILE, CUSTODY_MNEMONIC, CUSTODY_PUBLIC_KEYS). */
  env?: NodeJS.ProcessEnv;
}): Promise<RunningService> {
  const { logger, roles } = opts;
  const config: ServiceConfig = opts.config;
  const embedded = !(config.database.url || config.database.apiUrl || config.database.workerUrl) || !config.temporal.address;
  const lifecycle = opts.lifecycle ?? new Lifecycle();
  const stop = () => lifecycle.stop();
  try {
    // First: in production a bad configuration stops here, before anything is started or written.
    const env = opts.env ?? process.env;
    let environments = loadServiceEnvironments(config, logger, roles, env);
    const data = dataDir(env);
    // Then: a process that can't have its keys starts nothing. The worker reads the seed, an API alone only the public keys.
    const keys = keysForRoles(roles, { deployment: config.deployment, dataDir: data, env });

    const database = await openServiceDatabase(config, roles, lifecycle, logger);

    let temporalAddress = config.temporal.address;
    let uiUrl: string | undefined;
    if (!temporalAddress && config.temporal.embeddedEngine === 'cluster') {
      const cluster = await startTemporalCluster({
        postgres: clusterPostgresOf(database.url),
        frontendPort: config.temporal.embeddedPort,
        dir: path.join(data, 'temporal-cluster'),
      });
      lifecycle.add(
        'temporal cluster',
        () => cluster.stop(),
        () => CLUSTER_ROLES.forEach((role) => cluster.kill(role)),
      );
      temporalAddress = cluster.address;
    }
    if (!temporalAddress) {
      const dev = await startTemporalDevServer({
        port: config.temporal.embeddedPort,
        uiPort: config.temporal.uiPort,
        dbFile: path.join(data, 'temporal', 'temporal.db'),
        namespaces: [config.temporal.namespace],
      });
      lifecycle.add(
        'temporal dev server',
        () => dev.stop(),
        () => dev.kill(),
      );
      temporalAddress = dev.address;
      uiUrl = dev.uiUrl;
    }

    let rpcUrl: string | undefined;
    const sandbox = environments.environments.sandbox.networks[0];
    if (embedded && sandbox) {
      const anvil = await startAnvil({
        port: config.anvil.embeddedPort,
        chainId: sandbox.chainId,
        stateFile: path.join(data, 'anvil', 'state.json'),
        // Blocks keep coming, so confirmations advance as on a real chain.
        ...(opts.sandboxBlockTime === 0 ? {} : { blockTime: opts.sandboxBlockTime ?? 1 }),
      });
      lifecycle.add(
        'anvil',
        () => anvil.stop(),
        () => anvil.kill(),
      );
      await ensureSandboxToken({ rpcUrl: anvil.rpcUrl });
      environments = withRpcUrl(environments, sandbox.chainId, anvil.rpcUrl);
      rpcUrl = anvil.rpcUrl;
    }

    const serviceSecret = resolveServiceKeys(config, data);
    // The off-ramp provider: an outside one (OFFRAMP_PROVIDER_URL), or the sandbox provider in its
    // own process on the sandbox chain, its callbacks sent to this service's API.
    let offramp: OfframpProvider | undefined;
    let sandboxProviderUrl: string | undefined;
    const callbackSecret =
      config.offramp.callbackSecret ?? Buffer.from(deriveKey(serviceSecret.current, 'offramp-callback-secret')).toString('hex');
    if (config.offramp.providerUrl) {
      offramp = new HttpOfframpProvider({ baseUrl: config.offramp.providerUrl, callbackSecret, timeoutMs: config.offramp.timeoutMs });
    } else if (rpcUrl && sandbox) {
      const provider = await launchSandboxProvider({
        port: config.offramp.sandboxPort,
        dataDir: path.join(data, 'sandbox-provider'),
        logFile: path.join(data, 'logs', 'sandbox-provider.log'),
        rpcUrl,
        chainId: sandbox.chainId,
        callbackUrl: `http://${config.http.host}:${config.http.port}/v2/providers/sandbox/callbacks`,
        callbackSecret,
        env: { LOG_LEVEL: config.logLevel },
      });
      lifecycle.add(
        'sandbox provider',
        () => provider.stop(),
        () => provider.kill(),
      );
      sandboxProviderUrl = provider.url;
      offramp = new HttpOfframpProvider({ baseUrl: provider.url, callbackSecret, timeoutMs: config.offramp.timeoutMs });
    }
    const chain: ChainServices = { chains: createChainRegistry(environments), ...keys };
    await assertKeysMatchDatabase(database.db.prisma, keys);
    if (rpcUrl) await fundSandboxTreasury(chain, rpcUrl);
    await registerServiceWallets(database.db.prisma, chain.addressBook);
    const engine = await connectTemporalGateway({
      address: temporalAddress,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      updateTimeoutMs: config.temporal.updateTimeoutMs,
      rpcTimeoutMs: config.temporal.rpcTimeoutMs,
    });
    lifecycle.add('temporal client', () => engine.close());
    const service = composeService({
      config,
      environments,
      logger,
      serviceSecret,
      chains: chain.chains,
      addressBook: chain.addressBook,
      engine,
      ...(offramp ? { offramp } : {}),
    });

    let temporalMetricsUrl: string | undefined;
    if (roles.includes('worker')) {
      if (!keys.custody) throw new Error('the worker role has no signer');
      const metricsBindAddress = config.temporal.metricsBindAddress ?? `127.0.0.1:${await freePort()}`;
      temporalMetricsUrl = installWorkerRuntime({ metricsBindAddress }).metricsUrl;
      const connection = await connectWorkerConnection(temporalAddress);
      // Delivery workflows start on the worker's own connection, eagerly: their first task comes
      // back in the start's answer, not through a poll.
      const webhookStarter = workerWebhookStarter(connection, {
        namespace: config.temporal.namespace,
        taskQueue: config.temporal.taskQueue,
        rpcTimeoutMs: config.temporal.rpcTimeoutMs,
      });
      const workerDb = database.pool('worker');
      const worker = await createWorker({
        connection,
        namespace: config.temporal.namespace,
        taskQueue: config.temporal.taskQueue,
        workflowBundle: await loadWorkflowBundle(),
        activities: service.activities({ db: workerDb, custody: keys.custody, webhookStarter }),
        shutdownGraceTime: WORKER_DRAIN,
        reuseV8Context: config.temporal.reuseV8Context,
      });
      const running = worker.run();
      // Drained once, here; the Temporal runtime's own signal handlers are off (installWorkerRuntime).
      lifecycle.add('worker', async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
        await connection.close();
      });
      await retriedAtStart(logger, 'chain scanners', () =>
        engine.ensureChainScanners(
          chain.chains.networks().map((n) => n.chainId),
          { pollSeconds: opts.scannerPollSeconds ?? 2 },
        ),
      );
      await retriedAtStart(logger, 'webhook dispatcher', () => engine.ensureWebhookDispatcher());
      const kicks = startWebhookPickup({
        databaseUrl: database.urlOf('worker'),
        prisma: workerDb.prisma,
        logger,
        serviceSecret,
        destinations: config.webhooks,
        deliversIn: deliveringEnvironments(environments),
        engine,
        webhookStarter,
      });
      lifecycle.add('webhook kicks', () => kicks.stop());
      await kicks.ready;
      // Reconciliation runs by itself: deposits, the books against the chain, orphaned Payments.
      logger.info({ schedules: await retriedAtStart(logger, 'schedules', () => engine.ensureSchedules()) }, 'temporal schedules ensured');
    }

    let apiUrl: string | undefined;
    let adminUrl: string | undefined;
    if (roles.includes('api')) {
      const apiDb = database.pool('api');
      const { credentials, ready, stop: stopFollowing } = service.credentials({ db: apiDb, databaseUrl: database.urlOf('api') });
      lifecycle.add('credential changes', stopFollowing);
      await ready;
      const apiDeps = service.api({
        db: apiDb,
        credentials,
        // /metrics includes the Temporal runtime's series when the worker runs in this process.
        ...(temporalMetricsUrl ? { temporalMetricsUrl } : {}),
        ...(uiUrl ? { temporalUiUrl: uiUrl } : {}),
      });
      const server = await listenOn(createApi(apiDeps), config.http.port, config.http.host);
      lifecycle.add('api', () => closeServer(server, API_DRAIN_MS));
      apiUrl = `http://${config.http.host}:${config.http.port}`;
      // The admin plane on its own listener, loopback unless ADMIN_HOST opens it.
      const adminServer = await listenOn(createAdminApi(apiDeps), config.admin.port, config.admin.host);
      lifecycle.add('admin', () => closeServer(adminServer, API_DRAIN_MS));
      adminUrl = `http://${config.admin.host}:${config.admin.port}`;
    }
    return {
      config,
      environments,
      database,
      engine,
      chain,
      temporalAddress,
      uiUrl,
      rpcUrl,
      apiUrl,
      adminUrl,
      offramp,
      sandboxProviderUrl,
      temporalMetricsUrl,
      dataDir: data,
      stop,
      kill: () => lifecycle.kill(),
    };
  } catch (err) {
    await stop().catch((stopErr: unknown) => logger.error({ msg: String(stopErr) }, 'stop after a failed start failed'));
    throw err;
  }
}

/** Each role has a pool (API_/WORKER_DATABASE_POOL_*) and login of its own, also when both share this process. */
async function openServiceDatabase(config: ServiceConfig, roles: Role[], lifecycle: Lifecycle, logger: Logger): Promise<OpenedDatabase> {
  const database = await openDatabase(config, { role: roles.includes('worker') ? 'worker' : 'api' });
  lifecycle.add(
    'postgresql',
    () => database.close(),
    () => database.kill(),
  );
  await checkLogins(config, database, roles, logger);
  return database;
}

/**
 * Each role's login as the database sees it: in production a superuser, a login that could change the
 * schema, or an API login that can write the worker's tables (the worker's or the owner's) stops the
 * start; the sandbox only warns.
 */
async function checkLogins(config: ServiceConfig, database: OpenedDatabase, roles: Role[], logger: Logger): Promise<void> {
  const problems: string[] = [];
  for (const role of roles) {
    const facts = await loginFacts((sql) => database.pool(role).pool.query(sql));
    problems.push(...loginProblems(role, facts));
  }
  if (problems.length === 0) return;
  if (config.deployment === 'production')
    throw new ConfigError(`invalid production configuration (DEPLOYMENT=production):\n  ${problems.join('\n  ')}`);
  logger.warn({ problems }, 'database logins are not separated (refused in production)');
}

/**
 * A start-up call to Temporal, tried a few times: each call has a short deadline
 * (TEMPORAL_RPC_TIMEOUT_MS), and a busy server (say, catching up after a restart) can miss one.
 */
async function retriedAtStart<T>(logger: Logger, what: string, fn: () => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= attempts) throw err;
      logger.warn(
        { what, attempt, msg: err instanceof Error ? err.message : String(err) },
        'start-up call to Temporal failed; trying again',
      );
      await new Promise((resolve) => setTimeout(resolve, 2000 * attempt));
    }
  }
}

function listenOn(app: Koa<ApiState>, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = app.listen(port, host, () => resolve(s));
    s.once('error', reject);
  });
}

/** Stops accepting connections and lets in-flight requests finish; after `drainMs` closes the rest. */
function closeServer(server: Server, drainMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), drainMs);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/**
 * Committed events are dispatched at once (a NOTIFY from the events table), in the worker, not at the
 * dispatcher's poll; the dispatcher workflow stays the safety net.
 */
function startWebhookPickup(opts: {
  databaseUrl: string;
  prisma: Parameters<typeof createWebhookActivities>[0]['prisma'];
  logger: Logger;
  serviceSecret: Parameters<typeof createWebhookActivities>[0]['serviceSecret'];
  destinations: Parameters<typeof createWebhookActivities>[0]['destinations'];
  deliversIn: readonly string[] | undefined;
  engine: TemporalGateway;
  webhookStarter: ReturnType<typeof workerWebhookStarter>;
}) {
  const { dispatchWebhookEvents } = createWebhookActivities({
    prisma: opts.prisma,
    logger: opts.logger,
    serviceSecret: opts.serviceSecret,
    destinations: opts.destinations,
    ...(opts.deliversIn ? { deliversIn: opts.deliversIn } : {}),
    engine: opts.webhookStarter,
  });
  return startWebhookKicks({
    url: opts.databaseUrl,
    engine: opts.engine,
    logger: opts.logger,
    dispatch: () => dispatchWebhookEvents({ batchSize: DEFAULT_WEBHOOK_DISPATCHER.batchSize }),
  });
}
