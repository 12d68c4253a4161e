import type { Server } from 'node:http';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from './config';
import { loadEnvironments, withRpcUrl, type TEnvironments } from './config/environments';
import { createLogger } from './logger';
import { openDatabase } from './runtime/database';
import { resolveServiceSecret } from './runtime/service-secret';
import { dataDir } from './embedded/paths';
import { startTemporalDevServer } from './embedded/temporal-dev-server';
import { startAnvil } from './embedded/anvil';
import { ensureSandboxToken } from './chain/sandbox';
import { createApi } from './http/app';
import { connectTemporalClient, temporalHealthProbe } from './temporal/client';
import { bundleWorkflows, connectWorkerConnection, createWorker } from './temporal/worker';
import { createActivities, DEFAULT_TREASURY_POLICY } from '../activities';
import { createChainServices, ensureChainScanners, fundSandboxTreasury } from './runtime/chain-services';

/**
 * `npm start`: the whole service on one machine. Without DATABASE_URL / TEMPORAL_ADDRESS it runs the
 * embedded PostgreSQL, Temporal dev server (with Web UI) and an anvil sandbox chain, all under .data/.
 * `--only api` / `--only worker` run one role (the production shape runs them as separate processes).
 */
const stops: Array<() => Promise<void>> = [];

async function stopAll(log: (err: unknown) => void): Promise<void> {
  for (const stop of stops.splice(0).reverse()) await stop().catch(log);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { only: { type: 'string' } } });
  const roles = values.only ? [values.only] : ['api', 'worker'];
  if (roles.some((r) => r !== 'api' && r !== 'worker')) throw new Error('--only takes api or worker');

  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const data = dataDir();
  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    await stopAll((err) => logger.error({ err }, 'stop failed'));
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));

  const embedded = !config.database.url || !config.temporal.address;
  let environments: TEnvironments = loadEnvironments(config.environmentsFile);

  const opened = await openDatabase(config);
  stops.push(() => opened.close());

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
  if (embedded) {
    const sandbox = environments.environments.sandbox.networks[0];
    if (sandbox) {
      const anvil = await startAnvil({
        port: config.anvil.embeddedPort,
        chainId: sandbox.chainId,
        stateFile: path.join(data, 'anvil', 'state.json'),
        // A block a second, so confirmations advance as on a real chain.
        blockTime: 1,
      });
      stops.push(() => anvil.stop());
      await ensureSandboxToken({ rpcUrl: anvil.rpcUrl });
      environments = withRpcUrl(environments, sandbox.chainId, anvil.rpcUrl);
      rpcUrl = anvil.rpcUrl;
    }
  }

  const serviceSecret = resolveServiceSecret(config.serviceSecret, data);
  const chain = createChainServices(environments, data);
  if (rpcUrl) await fundSandboxTreasury(chain, rpcUrl);
  const client = await connectTemporalClient({ address: temporalAddress, namespace: config.temporal.namespace });
  stops.push(() => client.connection.close());

  if (roles.includes('worker')) {
    const connection = await connectWorkerConnection(temporalAddress);
    const worker = await createWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      workflowBundle: await bundleWorkflows(),
      activities: createActivities({
        db: opened.db,
        logger,
        chains: chain.chains,
        custody: chain.custody,
        temporal: client,
        treasury: DEFAULT_TREASURY_POLICY,
        serviceSecret,
      }),
    });
    const running = worker.run();
    await ensureChainScanners(client, config.temporal.taskQueue, chain.chains, { pollSeconds: 2 });
    stops.push(async () => {
      worker.shutdown();
      await running;
      await connection.close();
    });
  }

  if (roles.includes('api')) {
    const api = createApi({
      config,
      environments,
      db: opened.db,
      logger,
      serviceSecret,
      temporal: client,
      custody: chain.custody,
      temporalHealth: temporalHealthProbe(client),
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
  }

  const lines = [
    `Partner Payments API is running (${roles.join(' + ')})`,
    roles.includes('api') ? `  API:          http://${config.http.host}:${config.http.port}  (health: /healthz)` : null,
    `  Temporal:     ${temporalAddress}  namespace=${config.temporal.namespace}  taskQueue=${config.temporal.taskQueue}`,
    uiUrl ? `  Temporal UI:  ${uiUrl}` : null,
    `  PostgreSQL:   ${redactUrl(opened.url)}`,
    rpcUrl ? `  Sandbox EVM:  ${rpcUrl}  (anvil, chain ${environments.environments.sandbox.networks[0]?.chainId})` : null,
    `  Data:         ${data}`,
    `Create a credential: npm run cli -- apps create --environment sandbox --name my-app`,
    'Press Ctrl-C to stop.',
  ];
  process.stdout.write(`${lines.filter(Boolean).join('\n')}\n`);
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

main().catch(async (err: unknown) => {
  process.stderr.write(`failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  // Whatever did start (embedded servers) is stopped, so a retry finds its ports free.
  await stopAll(() => undefined);
  process.exit(1);
});
