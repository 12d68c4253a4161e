import type { Server } from 'node:http';
import path from 'node:path';
import type { ServiceConfig } from '../config';
import { loadEnvironments, withRpcUrl, type TEnvironments } from '../config/environments';
import type { Logger } from '../logger';
import { openDatabase, type OpenedDatabase } from './database';
import { resolveServiceSecret } from './service-secret';
import { dataDir } from '../embedded/paths';
import { startTemporalDevServer } from '../embedded/temporal-dev-server';
import { startAnvil } from '../embedded/anvil';
import { ensureSandboxToken } from '../chain/sandbox';
import { createApi } from '../http/app';
import { connectTemporalGateway, type TemporalGateway } from '../temporal/gateway';
import { connectWorkerConnection, createWorker } from '../temporal/worker';
import { loadWorkflowBundle } from '../temporal/workflow-bundle';
import { createActivities } from '../../activities';
import { DEFAULT_TREASURY_POLICY } from '../domain/settlement/settlement-sender';
import { registerServiceWallets } from '../domain/custody-addresses';
import { createChainServices, fundSandboxTreasury, type ChainServices } from './chain-services';

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
  dataDir: string;
  stop(): Promise<void>;
}

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
}): Promise<RunningService> {
  const { logger, roles } = opts;
  const embedded = !opts.config.database.url || !opts.config.temporal.address;
  // The embedded sandbox lets developers point webhooks at local receivers over plain http.
  const config: ServiceConfig = embedded
    ? { ...opts.config, webhooks: { allowPrivateDestinations: true } }
    : opts.config;
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s().catch((err: unknown) => logger.error({ err }, 'stop failed'));
  };
  try {
    const data = dataDir();
    let environments = loadEnvironments(config.environmentsFile);

    // Each role has a pool of its own (API_/WORKER_DATABASE_POOL_*), also when both share this process.
    const database = await openDatabase(config, { role: roles.includes('worker') ? 'worker' : 'api' });
    stops.push(() => database.close());

    let temporalAddress = config.temporal.address;
    let uiUrl: string | undefined;
    if (!temporalAddress) {
      const dev = await startTemporalDevServer({
        port: config.temporal.embeddedPort,
        uiPort: config.temporal.uiPort,
        dbFile: path.join(data, 'temporal', 'temporal.db'),
        namespaces: [config.temporal.namespace],
      });
      stops.push(() => dev.stop());
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
      stops.push(() => anvil.stop());
      await ensureSandboxToken({ rpcUrl: anvil.rpcUrl });
      environments = withRpcUrl(environments, sandbox.chainId, anvil.rpcUrl);
      rpcUrl = anvil.rpcUrl;
    }

    const serviceSecret = resolveServiceSecret(config.serviceSecret, data);
    const chain = createChainServices(environments, data);
    if (rpcUrl) await fundSandboxTreasury(chain, rpcUrl);
    await registerServiceWallets(database.db.prisma, chain.custody);
    const engine = await connectTemporalGateway({
      address: temporalAddress,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      rpcTimeoutMs: config.temporal.rpcTimeoutMs,
    });
    stops.push(() => engine.close());

    if (roles.includes('worker')) {
      const connection = await connectWorkerConnection(temporalAddress);
      const worker = await createWorker({
        connection,
        namespace: config.temporal.namespace,
        taskQueue: config.temporal.taskQueue,
        workflowBundle: await loadWorkflowBundle(),
        activities: createActivities({
          db: database.pool('worker'),
          logger,
          chains: chain.chains,
          custody: chain.custody,
          engine,
          treasury: DEFAULT_TREASURY_POLICY,
          serviceSecret,
          webhooks: config.webhooks,
        }),
      });
      const running = worker.run();
      stops.push(async () => {
        worker.shutdown();
        await running;
        await connection.close();
      });
      await engine.ensureChainScanners(chain.chains.networks().map((n) => n.chainId), { pollSeconds: opts.scannerPollSeconds ?? 2 });
      await engine.ensureWebhookDispatcher();
      // Reconciliation runs by itself: deposits, the books against the chain, orphaned Payments.
      logger.info({ schedules: await engine.ensureSchedules() }, 'temporal schedules ensured');
    }

    let apiUrl: string | undefined;
    if (roles.includes('api')) {
      const api = createApi({
        config,
        environments,
        db: database.pool('api'),
        logger,
        serviceSecret,
        engine,
        custody: chain.custody,
        temporalHealth: () => engine.ping(),
      });
      const server: Server = await new Promise((resolve) => {
        const s = api.listen(config.http.port, config.http.host, () => resolve(s));
      });
      stops.push(
        () =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeIdleConnections();
          }),
      );
      apiUrl = `http://${config.http.host}:${config.http.port}`;
    }
    return { config, environments, database, engine, chain, temporalAddress, uiUrl, rpcUrl, apiUrl, dataDir: data, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
