import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { Worker } from '@temporalio/worker';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { loadConfig, type ServiceConfig } from '../../src/config';
import { loadEnvironments, type TEnvironments } from '../../src/config/environments';
import { createDatabase, type Database } from '../../src/db/client';
import { createApi, serveApi, type ApiDeps } from '../../src/http/app';
import { createLogger, type Logger } from '../../src/logger';
import { openDatabase, type OpenedDatabase } from '../../src/runtime/database';
import pg from 'pg';
import { testServerExecutable } from '../../src/embedded/paths';
import { noteEngineClock } from './engine-clock';
import { bundleWorkflows, createWorker, prometheusTelemetry } from '../../src/temporal/worker';
import { composeService } from '../../src/runtime/composition';
import { createEngineProbes, type EngineProbes } from '../../src/temporal/probes';
import { WEBHOOK_RETRY_POLICY } from '../../src/domain/webhooks/policy';
import { registerServiceWallets } from '../../src/domain/chain/custody-addresses';
import { createTemporalGateway, type GatewayOptions, type TemporalGateway } from '../../src/temporal/gateway';
import { workflowTaskTimeout } from '../../src/temporal/task-timeout';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { withRpcUrl } from '../../src/config/environments';
import { startAnvil } from '../../src/embedded/anvil';
import { noteChainBaselines } from './chain-baseline';
import { ensureSandboxToken } from '../../src/chain/sandbox';
import { addressKeys, createChainServices, fundSandboxTreasury, type SigningChainServices } from '../../src/runtime/chain-services';
import { startMailbox, type Mailbox } from './mailbox';
import { startTwoChains, withTwoChainProduction, type TwoChains } from './two-chains';
import { freePort } from '../../src/embedded/process';
import { HttpOfframpProvider } from '../../src/offramp/http-provider';
import type { Payout, ProviderBankAccount, ProviderCallback } from '../../src/offramp/offramp-provider';
import { launchSandboxProvider, type SandboxProviderProcess } from '../../src/offramp/sandbox-provider/launch';
import { closeAtSuiteEnd } from './suite-end';
import { reportLeftovers } from './leftovers';
import { processFiles, stopsTheWorker } from './test-files';

/**
 * One shared environment per test run: a fresh PostgreSQL database, one Java time-skipping Temporal
 * server, one worker and the real Koa app on a random port. Started on first use.
 */
export interface Harness {
  config: ServiceConfig;
  environments: TEnvironments;
  /** The owner's pool: what tests seed, inspect and rig the database with. */
  db: Database;
  /** The API's own login's pool: what the API under test (and apiDepsOnHarness) runs on. */
  apiDb: Database;
  /** The worker's own login's pool: what the worker's activities run on. */
  workerDb: Database;
  databaseUrl: string;
  /** The API's or the worker's own login to the same database (the owner's when DATABASE_URL alone is set). */
  databaseUrlOf(role: 'api' | 'worker'): string;
  env: TestWorkflowEnvironment;
  /** The service's one gateway to Temporal, on the time-skipping test server. */
  engine: TemporalGateway;
  /** What tests ask of the engine beyond the service's operations (histories). */
  probes: EngineProbes;
  /**
   * The webhook retry waits from now on (null: the contract's 30 s and 5 min). A test whose waits
   * would have time skip through every other workflow's timers sets short ones, and clears them.
   */
  webhookRetry: { backoffMs: number[] | null };
  /** Changes to the settlement policies of the workflows the engine starts from now on (a test sets and clears them). */
  policies: NonNullable<GatewayOptions['policies']>;
  taskQueue: string;
  workflowBundle: WorkflowBundleWithSourceMap;
  baseUrl: string;
  logger: Logger;
  rpcUrl: string;
  chainId: number;
  /** The production environment's two chains (8453 and 1), each with USDC and EURC at their real addresses. */
  twoChains: TwoChains;
  chain: SigningChainServices;
  /** The SMTP server the API's mailer (SMTP_URL) delivers to. */
  mailbox: Mailbox;
  /** The DATA_DIR holding the custody seed, for CLI processes that must derive the same addresses. */
  custodyDataDir: string;
  /** The sandbox off-ramp provider, its own process, its callbacks posted to this API. */
  provider: SandboxProviderHarness;
  /** The Temporal runtime's Prometheus endpoint (the shared worker's temporal_* metrics). */
  temporalMetricsUrl: string;
  /** Stops the shared worker and starts a new one, as if the worker process was killed and restarted. */
  restartWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  startWorker(): Promise<void>;
}

/** What the provider answered about what a callback named: what the callback route hands on. */
export type ProviderAnswer =
  { type: 'payout.updated'; payout: Payout } | { type: 'bank_account.updated'; bankAccountId: string; account: ProviderBankAccount };

/** The adapter, keeping every callback it verified (what each names), for tests of the provider's sends. */
class HintRecordingProvider extends HttpOfframpProvider {
  constructor(
    opts: ConstructorParameters<typeof HttpOfframpProvider>[0],
    private readonly hints: ProviderCallback[],
  ) {
    super(opts);
  }

  override verifyCallback(rawBody: string, headers: Record<string, string | string[] | undefined>): ProviderCallback {
    const callback = super.verifyCallback(rawBody, headers);
    this.hints.push(callback);
    return callback;
  }
}

/** The shared sandbox provider process, and the handlers its callbacks reach in the harness API. */
export interface SandboxProviderHarness {
  url: string;
  /** The provider's own address (every quote's deposit address). */
  address: string;
  /** The adapter the API verifies callbacks with (3 s timeouts). */
  adapter: HttpOfframpProvider;
  callbackSecret: string;
  dataDir: string;
  /** The settings the process was started with (SANDBOX_PROVIDER_*), for a test that starts another. */
  env: Record<string, string>;
  /** Every verified callback the API received (what it names), in order. */
  hints: ProviderCallback[];
  /** Every provider answer those callbacks led to (what the handlers got), in order. */
  received: ProviderAnswer[];
  /** What the API's callback route calls: the bank accounts and payouts modules, or a test's. */
  handlers: {
    onPayoutUpdated?(payout: Payout): Promise<void>;
    onBankAccountUpdated?(bankAccountId: string, account: ProviderBankAccount): Promise<void>;
  };
  /** Sandbox control: the completed payout comes back now (an ACH return). */
  returnPayout(paymentId: string): Promise<Response>;
  /** Sandbox control: settles an uncertain payout. */
  resolvePayout(paymentId: string, status: 'completed' | 'failed'): Promise<Response>;
  process: SandboxProviderProcess;
}

/** Short sandbox delays: a payout completes in a few hundred ms, a hung request outlasts a 300 ms timeout. */
export const TEST_SANDBOX_PROVIDER_ENV: Record<string, string> = {
  SANDBOX_PROVIDER_STEP_MS: '100',
  SANDBOX_PROVIDER_VERIFY_DELAY_MS: '100',
  SANDBOX_PROVIDER_HANG_MS: '1500',
  SANDBOX_PROVIDER_QUOTE_TTL_SECONDS: '600',
  SANDBOX_PROVIDER_CALLBACK_BACKOFF_MS: '100',
  LOG_LEVEL: 'warn',
};
export const TEST_OFFRAMP_CALLBACK_SECRET = 'test-offramp-callback-secret-0123456789abcdef';

let starting: Promise<Harness> | undefined;
const cleanups: Array<() => Promise<void>> = [];

/** Workflows the shared worker keeps in memory: more than a shard has open at once. */
const CACHED_WORKFLOWS = 500;
/**
 * Seconds a workflow task may take where the worker caches nothing: there each task replays its whole
 * history, and on a busy machine the tasks queued behind one another outlast the default 10 s, the
 * server takes them back ("Expired workflow task"), and the workflow stalls. The service's worker caches.
 */
const UNCACHED_TASK_TIMEOUT_SECONDS = 30;
let offrampDeps: ApiDeps['offramp'];

export function getHarness(): Promise<Harness> {
  if (!starting) {
    starting = start();
    closeAtSuiteEnd(closeHarness);
    if (process.env.TEST_LEFTOVERS) closeAtSuiteEnd(async () => reportLeftovers(await starting!));
  }
  return starting;
}

/**
 * What every gateway of the tests starts workflows with: deliveries' first attempts and Payments' and
 * deposits' short steps as activity tasks, not local activities (GatewayOptions.policies: the
 * time-skipping server skips time through a task that runs a local activity).
 */
export function testEnginePolicies(): NonNullable<GatewayOptions['policies']> {
  return { webhookDelivery: { firstAttemptLocal: false }, shortSteps: { local: false } };
}

export const TEST_SERVICE_SECRET = 'test-service-secret-0123456789abcdef0123456789';

async function start(): Promise<Harness> {
  const mailbox = await startMailbox();
  cleanups.push(() => mailbox.close());
  const config = loadConfig({
    ...process.env,
    SMTP_URL: mailbox.url,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    RATE_LIMIT_POINTS: '100000',
    // Every test calls from 127.0.0.1, many with client tokens, wrong secrets or checkout pages: the
    // quotas are under test on APIs of their own (test/api/rate-limit.test.ts, ip-limits.test.ts).
    CLIENT_RATE_LIMIT_POINTS: '100000',
    LOGIN_FAILURE_LIMIT_POINTS: '100000',
    CHECKOUT_RATE_LIMIT_POINTS: '100000',
    PUBLIC_RATE_LIMIT_POINTS: '100000',
    DASHBOARD_SIGN_IN_LIMIT_POINTS: '100000',
    OPERATOR_SIGN_IN_LIMIT_POINTS: '100000',
    // The suite's one worker is shared by every test and the machine by other work: an update (a
    // cancel) waits longer for its workflow task before the 503 it would answer in production. The
    // 503 itself is tested with a short deadline of its own (bounded-api.ts).
    TEMPORAL_UPDATE_TIMEOUT_MS: '30000',
    TEMPORAL_TASK_QUEUE: 'partner-payments-test',
    // Delivery tests post to local receivers: the API (endpoint creation, the config) and the worker
    // (delivery) follow this one setting, as in the embedded stack.
    WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS: 'true',
    // The write gate at its fixed bounds: a busy machine must not shrink what a test's burst may
    // send. The learned limit is tested on its own (adaptive-limit, admission-gate).
    API_ADAPTIVE_WRITE_LIMIT: 'false',
    API_QUEUED_WRITE_WAIT_MS: '1000',
  });
  const [anvil, twoChains] = await Promise.all([startAnvil({ port: 0 }), startTwoChains()]);
  cleanups.push(
    () => anvil.stop(),
    () => twoChains.stop(),
  );
  await ensureSandboxToken({ rpcUrl: anvil.rpcUrl });
  const sandboxChainId = loadEnvironments(config.environmentsFile).environments.sandbox.networks[0]!.chainId;
  // The sandbox on its anvil (31337); production on two chains shaped as Base and Ethereum.
  const environments = withTwoChainProduction(
    withRpcUrl(loadEnvironments(config.environmentsFile), sandboxChainId, anvil.rpcUrl),
    twoChains.networks,
  );
  const custodyDataDir = mkdtempSync(path.join(os.tmpdir(), 'pp-test-custody-'));
  // The worker signs with the seed; the API gets the address book of the public keys the worker wrote, as an API of its own would.
  const chain = createChainServices(environments, custodyDataDir);
  const apiAddressBook = addressKeys({ deployment: 'sandbox', dataDir: custodyDataDir, env: {} }).addressBook;
  for (const rpcUrl of [anvil.rpcUrl, ...twoChains.networks.map((n) => n.rpcUrl)]) await fundSandboxTreasury(chain, rpcUrl);
  const logger = createLogger(config.logLevel);

  // The sandbox provider starts now, beside the rest (it takes a second or more on a busy machine):
  // the API's server binds first, as the provider's callbacks go to it; it gets its app further down.
  // Every port here is bound where chosen: a port picked ahead could be taken by another shard meanwhile.
  const server = await listenOnAnyPort();
  const apiPort = (server.address() as AddressInfo).port;
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const providerDataDir = mkdtempSync(path.join(os.tmpdir(), 'pp-test-provider-'));
  const providerStarting = launchSandboxProvider({
    port: 0,
    dataDir: providerDataDir,
    rpcUrl: anvil.rpcUrl,
    chainId: sandboxChainId,
    callbackUrl: `http://127.0.0.1:${apiPort}/v2/providers/sandbox/callbacks`,
    callbackSecret: TEST_OFFRAMP_CALLBACK_SECRET,
    env: TEST_SANDBOX_PROVIDER_ENV,
    logFile: path.join(providerDataDir, 'provider.log'),
  });
  cleanups.push(async () => (await providerStarting.catch(() => undefined))?.stop());
  providerStarting.catch(() => undefined); // awaited below; a failure is thrown there

  // A database per run, so two runs on one machine (a developer's and CI's) can't drop each other's.
  const databaseName = `partner_payments_test_${process.pid}`;
  const opened: OpenedDatabase = await openDatabase(config, { databaseName, fresh: true });
  // Tests seed, inspect and rig the database (triggers, ALTERs) as its owner; the service under test
  // runs as in production, the API on its login and the worker on its own, so a statement either
  // makes beyond its role's grants fails here (test/db/database-roles.test.ts checks the grants).
  const ownerDb = createDatabase({
    url: opened.url,
    poolMax: config.database.pools.worker.max,
    acquireTimeoutMs: config.database.pools.worker.acquireTimeoutMs,
  });
  const apiDb = opened.pool('api');
  const workerDb = opened.pool('worker');
  cleanups.push(async () => {
    // Every pool ends before the database is dropped (its FORCE would break their idle connections).
    for (const db of [ownerDb, apiDb, workerDb]) await db.close();
    await dropDatabase(opened.url, databaseName);
    await opened.close();
  });

  // Temporal's own INFO lines drown the test report; warnings and errors still show. Installed before
  // any worker, with the Prometheus exporter the service's worker has (the /metrics tests read it).
  const temporalMetrics = await installTestRuntime();
  // Cached workflows replay nothing on each task; a process that stops its worker can't cache (test-files.ts).
  const stoppable = processFiles().some(stopsTheWorker);
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: testServerExecutable() } },
    ...(stoppable ? { client: { interceptors: { workflow: [workflowTaskTimeout(UNCACHED_TASK_TIMEOUT_SECONDS)] } } } : {}),
  });
  cleanups.push(() => env.teardown());
  noteEngineClock(env);

  await registerServiceWallets(ownerDb.prisma, chain.addressBook);
  const policies: Harness['policies'] = testEnginePolicies();
  const webhookRetry: Harness['webhookRetry'] = { backoffMs: null };
  // Its scanner scans when poked, not on every block: workflows keep their fast polls (no 2 s floor).
  const engine = createTemporalGateway(env.client, { taskQueue: config.temporal.taskQueue, policies, safetyNetFloorSeconds: 0 });
  const workflowBundle = await bundleWorkflows();
  // The provider's adapter (3 s timeouts): the API quotes and verifies callbacks with it, activities pay out.
  const hints: ProviderCallback[] = [];
  const adapter = new HintRecordingProvider({ baseUrl: (await providerStarting).url, callbackSecret: TEST_OFFRAMP_CALLBACK_SECRET }, hints);
  const received: ProviderAnswer[] = [];
  const handlers: SandboxProviderHarness['handlers'] = {};
  // The service as `npm start` wires it; tests observe the provider's callbacks, or put their own handlers in.
  const service = composeService(
    {
      config,
      environments,
      logger,
      serviceSecret: TEST_SERVICE_SECRET,
      chains: chain.chains,
      addressBook: apiAddressBook,
      engine,
      offramp: adapter,
    },
    {
      webhookRetryBackoffMs: () => webhookRetry.backoffMs ?? WEBHOOK_RETRY_POLICY.backoffMs,
      offrampCallbacks: (wired) => ({
        async onPayoutUpdated(payout) {
          await (handlers.onPayoutUpdated ?? wired.onPayoutUpdated)?.(payout);
          received.push({ type: 'payout.updated', payout });
        },
        async onBankAccountUpdated(bankAccountId, account) {
          await (handlers.onBankAccountUpdated ?? wired.onBankAccountUpdated)?.(bankAccountId, account);
          received.push({ type: 'bank_account.updated', bankAccountId, account });
        },
      }),
    },
  );
  const activities = service.activities({ db: workerDb, custody: chain.custody });
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  const startWorker = async () => {
    if (worker) return;
    worker = await createWorker({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue: config.temporal.taskQueue,
      workflowBundle,
      activities,
      maxCachedWorkflows: stoppable ? 0 : CACHED_WORKFLOWS,
      shutdownGraceTime: '20s',
    });
    running = worker.run();
  };
  const stopWorker = async () => {
    if (!worker) return;
    worker.shutdown();
    await running;
    worker = undefined;
  };
  await startWorker();
  cleanups.push(stopWorker);
  const stopWorkerInTest = async () => {
    if (!stoppable) throw new Error('this file stops the shared worker: list it in STOP_THE_WORKER (test/support/test-files.ts)');
    await stopWorker();
  };
  // Tests poke the scanner after each transfer. It sleeps between scans: a block-waiting activity
  // would hold the time-skipping clock (a 10-minute expiry then waits in real time).
  await engine.ensureChainScanners(
    chain.chains.networks().map((n) => n.chainId),
    { pollSeconds: 3600, waitForBlocks: false },
  );

  // As the service runs it: credentials cached, a rotation or revocation heard through a NOTIFY.
  const { credentials, ready, stop: stopFollowing } = service.credentials({ db: apiDb, databaseUrl: opened.urlOf('api') });
  cleanups.push(stopFollowing);
  await ready;
  const apiDeps = service.api({ db: apiDb, credentials, temporalMetricsUrl: temporalMetrics.metricsUrl });
  offrampDeps = apiDeps.offramp;
  const api = createApi(apiDeps);
  serveApi(server, api, environments.apiVersion);
  const providerProcess = await providerStarting;
  const control = (paymentId: string, action: string, body?: unknown) =>
    fetch(`${providerProcess.url}/sandbox/payouts/${encodeURIComponent(paymentId)}/${action}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body ?? {}),
    });
  const provider: SandboxProviderHarness = {
    url: providerProcess.url,
    address: providerProcess.address,
    adapter,
    callbackSecret: TEST_OFFRAMP_CALLBACK_SECRET,
    dataDir: providerDataDir,
    env: TEST_SANDBOX_PROVIDER_ENV,
    hints,
    received,
    handlers,
    returnPayout: (paymentId) => control(paymentId, 'return'),
    resolvePayout: (paymentId, status) => control(paymentId, 'resolve', { status }),
    process: providerProcess,
  };

  // Every file must leave these chains' fee market, mining mode and clock as it found them (test/index.ts).
  await noteChainBaselines([anvil.rpcUrl, ...twoChains.networks.map((n) => n.rpcUrl)]);
  return {
    config,
    environments,
    db: ownerDb,
    apiDb,
    workerDb,
    databaseUrl: opened.url,
    databaseUrlOf: opened.urlOf,
    env,
    engine,
    probes: createEngineProbes(env.client, config.temporal.taskQueue),
    policies,
    webhookRetry,
    taskQueue: config.temporal.taskQueue,
    workflowBundle,
    baseUrl: `http://127.0.0.1:${apiPort}`,
    logger,
    rpcUrl: anvil.rpcUrl,
    chainId: sandboxChainId,
    twoChains,
    chain,
    mailbox,
    custodyDataDir,
    provider,
    temporalMetricsUrl: temporalMetrics.metricsUrl,
    startWorker,
    stopWorker: stopWorkerInTest,
    async restartWorker() {
      await stopWorkerInTest();
      await startWorker();
    },
  };
}

async function listenOnAnyPort(): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return server;
}

/**
 * Installs Temporal's runtime with its Prometheus exporter on a free port. Core binds the port itself
 * and can't be asked which it chose, so a port another shard took in between is tried again.
 */
async function installTestRuntime(): Promise<ReturnType<typeof prometheusTelemetry>> {
  for (let attempt = 1; ; attempt++) {
    const telemetry = prometheusTelemetry(`127.0.0.1:${await freePort()}`);
    try {
      Runtime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: telemetry.telemetryOptions });
      return telemetry;
    } catch (err) {
      if (attempt >= 5 || !/Address already in use/.test(String(err))) throw err;
    }
  }
}

/** Stops everything in reverse order of start. Called once, after the last test. */
export async function closeHarness(): Promise<void> {
  if (!starting) return;
  await starting.catch(() => undefined);
  for (const cleanup of cleanups.reverse()) {
    await cleanup().catch((err: unknown) => console.error('harness cleanup failed', err));
  }
}

async function dropDatabase(url: string, name: string): Promise<void> {
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/**
 * The API's dependencies on the shared harness, for a test that runs an API of its own (another
 * config, logger or engine): no Temporal health probe or engine unless the overrides give one.
 */
export async function apiDepsOnHarness(overrides: Partial<ApiDeps> = {}): Promise<ApiDeps> {
  const h = await getHarness();
  return {
    config: h.config,
    environments: h.environments,
    custody: h.chain.addressBook,
    db: h.apiDb,
    logger: h.logger,
    serviceSecret: TEST_SERVICE_SECRET,
    temporalHealth: async () => undefined,
    offramp: offrampDeps,
    metrics: { temporalMetricsUrl: h.temporalMetricsUrl },
    ...overrides,
  };
}
