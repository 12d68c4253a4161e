import { rmSync } from 'node:fs';
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Address } from 'viem';
import path from 'node:path';
import { createLogger } from '../src/logger';
import { startService } from '../src/runtime/service';
import { Lifecycle } from '../src/runtime/lifecycle';
import { createApp } from '../src/domain/apps/apps';
import { freePort } from '../src/embedded/process';
import { dataDir } from '../src/embedded/paths';
import { stackSettings } from '../simulate/stack';
import { rpcUrlSetting } from '../src/config/network-settings';
import { startApiProcess } from './api-process';
import type { BenchContext } from './context';
import { ENGINES, newBenchRun, newFigures, type BenchFigures, type Engine } from './figures';
import { ceilings } from './phases/ceilings';
import { createPhase } from './phases/create';
import { createTracesPhase } from './phases/create-traces';
import { settlePhase } from './phases/settle';
import { overloadPhase } from './phases/overload';
import { webhooksPhase, webhooksSustainedPhase } from './phases/webhooks';
import { listsPhase } from './phases/lists';
import { scannerPhase } from './phases/scanner';
import { engineWorkPhase } from './phases/engine-work';
import { restStack } from './stack-cpu';
import { prioritiseProcess } from './priority';

/**
 * `npm run bench`: the figures of docs/performance.md, against an embedded stack of its own (`<data>/bench-<engine>`:
 * PostgreSQL, the Temporal engine, anvil), with the API in its own process. Prints; asserts nothing but
 * the overload check.
 *   --json          end with one JSON line of every figure (BenchRun in bench/figures.ts), for scripts
 *   --only a,b      run only these phases: engine-work, ceilings, create, settle, webhooks, webhooks-sustained, lists, scanner, overload
 *                   (engine-work: one run of each flow, its workflow tasks, activity tasks, local activities and history events)
 *   --engine cluster  Temporal Server's four roles over PostgreSQL instead of the dev server (set up when missing);
 *   --engine both (or dev,cluster)  the phases on each engine in turn, the first's stack stopped before the next starts
 *   BENCH_COUNT (2000) and BENCH_CONCURRENCY (32): requests per closed-loop figure and clients;
 *   BENCH_SETTLE (40): Payments timed from a confirmed transfer to `succeeded`;
 *   BENCH_WEBHOOK_RATE (20) and BENCH_WEBHOOK_SECONDS (60): events per second, and for how long;
 *   BENCH_WEBHOOK_SUSTAINED_RATE (50) and BENCH_WEBHOOK_SUSTAINED_SECONDS (300): the same for webhooks-sustained;
 *   BENCH_LIST_ROWS (1000000) and BENCH_LIST_READS (200): rows seeded per list (after 10k), reads per page;
 *   BENCH_SCANNER_SECONDS (60), BENCH_SCANNER_BASELINE_SECONDS (10), BENCH_SCANNER_BLOCK_MS (2000),
 *   BENCH_SCANNER_TRANSFERS (200) and BENCH_SCANNER_OURS (2): mainnet-shaped blocks for the chain scanner;
 *   BENCH_OVERLOAD_SECONDS (15): creates at twice the maximum rate, last;
 *   BENCH_OVERLOAD_NICE (-10): the API process and the load's process's nice value in that phase, 0 to leave them (needs root or CAP_SYS_NICE);
 *   BENCH_REST_CORES (0.3) and BENCH_REST_SECONDS (300): before each phase, the stack rests until it keeps fewer cores busy, this long at most;
 *   BENCH_QUIET_LOAD (1.5) and BENCH_QUIET_WAIT_SECONDS (600): each engine's half waits for the load average to fall under it, this long at most.
 */
const COUNT = Number(process.env.BENCH_COUNT ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const SETTLE = Number(process.env.BENCH_SETTLE ?? 40);
const OVERLOAD_SECONDS = Number(process.env.BENCH_OVERLOAD_SECONDS ?? 15);
const OVERLOAD_NICE = Number(process.env.BENCH_OVERLOAD_NICE ?? -10);

const PHASES = ['engine-work', 'ceilings', 'create', 'settle', 'webhooks', 'webhooks-sustained', 'lists', 'scanner', 'overload'] as const;
type PhaseName = (typeof PHASES)[number];

/** `--engine dev`, `cluster`, `both` or a list (`dev,cluster`): the engines, in the order given. */
function parseEngines(arg: string): Engine[] {
  const names = arg === 'both' ? [...ENGINES] : arg.split(',');
  for (const name of names)
    if (!ENGINES.includes(name as Engine)) throw new Error(`--engine takes ${ENGINES.join(', ')}, both or a list, got ${arg}`);
  return [...new Set(names as Engine[])];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { json: { type: 'boolean', default: false }, only: { type: 'string' }, engine: { type: 'string', default: 'dev' } },
  });
  const engines = parseEngines(values.engine);
  const only = values.only ? new Set(values.only.split(',')) : null;
  for (const name of only ?? [])
    if (!PHASES.includes(name as PhaseName)) throw new Error(`--only: no phase ${name} (${PHASES.join(', ')})`);
  const runs = (name: PhaseName) => !only || only.has(name);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  // Ctrl-C stops the bench's own stack like `npm start` stops its one (src/runtime/lifecycle.ts).
  const lifecycle = new Lifecycle();
  lifecycle.stopOnSignals((line) => process.stdout.write(`bench: ${line}\n`));
  const base = dataDir();
  const run = newBenchRun();
  for (const engine of engines) {
    // One engine's stack at a time, each in its own data folder: its own PostgreSQL cluster, chain,
    // engine store and ports, so nothing the first left behind lands in the second's figures.
    const load = await quietMachine(out);
    const stack = new Lifecycle();
    lifecycle.add(
      `${engine} stack`,
      () => stack.stop(),
      () => stack.kill(),
    );
    try {
      const figures = await benchEngine(engine, path.join(base, `bench-${engine}`), { runs, out, lifecycle: stack });
      // The load this half started on, before its own stack: the figure the table prints.
      run.engines[engine] = { ...figures, machine: { ...figures.machine, loadAverage1m: load } };
    } finally {
      await stack.stop();
    }
  }
  if (values.json) out(JSON.stringify(run));
}

/**
 * Waits for the machine to be quiet before an engine's half: the 1-minute load average under
 * BENCH_QUIET_LOAD (1.5), for at most BENCH_QUIET_WAIT_SECONDS (600). Answers the load it starts on;
 * a machine that stays busy is run anyway, and the load printed says so.
 */
async function quietMachine(out: (line: string) => void): Promise<number> {
  const below = Number(process.env.BENCH_QUIET_LOAD ?? 1.5);
  const deadline = Date.now() + Number(process.env.BENCH_QUIET_WAIT_SECONDS ?? 600) * 1000;
  const load = () => Math.round(os.loadavg()[0]! * 100) / 100;
  while (load() >= below && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5000));
  const reached = load();
  out(`bench: load average ${reached} at the start (${reached < below ? 'quiet' : `still not under ${below} after the wait`})`);
  return reached;
}

/** Starts one engine's stack in `dir`, runs the chosen phases against it, and returns its figures. */
async function benchEngine(
  engine: Engine,
  dir: string,
  opts: { runs: (name: PhaseName) => boolean; out: (line: string) => void; lifecycle: Lifecycle },
): Promise<BenchFigures> {
  const { runs, out, lifecycle } = opts;
  // A fresh stack each run: an earlier run's open Payments (thousands, from create and overload)
  // would be resumed by the reconciler and load the engine under this run's figures.
  rmSync(dir, { recursive: true, force: true });
  process.env.DATA_DIR = dir;
  const { config } = await stackSettings({
    defaultDataDir: dir,
    overrides: {
      EMBEDDED_ANVIL_PORT: process.env.BENCH_ANVIL_PORT ?? '8645',
      WORKER_DATABASE_POOL_MAX: process.env.WORKER_DATABASE_POOL_MAX ?? '20',
      EMBEDDED_TEMPORAL_ENGINE: engine,
      SANDBOX_PROVIDER_PORT: String(await freePort()),
      ...(process.env.BENCH_PORT ? { PORT: process.env.BENCH_PORT } : {}),
    },
  });
  const logger = createLogger('warn');
  const service = await startService({ config, logger, roles: ['worker'], scannerPollSeconds: 1, sandboxBlockTime: 0, lifecycle });
  const network = service.environments.environments.sandbox.networks[0]!;
  const startApi = async (port: number, env: Record<string, string> = {}) =>
    startApiProcess({
      databaseUrl: service.database.url,
      temporalAddress: service.temporalAddress,
      port,
      env: {
        // The quota is lifted: the bench measures the service, not the per-credential limit.
        RATE_LIMIT_POINTS: '1000000',
        API_DATABASE_POOL_MAX: process.env.API_DATABASE_POOL_MAX ?? '20',
        // The bench's own anvil, not the environments file's default port (vaults read the chain).
        [rpcUrlSetting(network.code)]: service.rpcUrl!,
        ...env,
      },
    });
  const api = await startApi(config.http.port);
  lifecycle.add('api process', () => api.stop());
  const figures = newFigures(engine);
  const cred = await createApp(service.database.db.prisma, { name: 'bench', environment: 'sandbox' }, service.environments.apiVersion);
  const authorization = `Basic ${Buffer.from(`${cred.appId}:${cred.appSecret}`).toString('base64')}`;
  const call: BenchContext['api'] = async (path, init = {}) => {
    const res = await fetch(`${api.url}${path}`, {
      method: init.method ?? (init.body ? 'POST' : 'GET'),
      headers: { authorization, 'content-type': 'application/json', ...(init.key ? { 'idempotency-key': init.key } : {}), ...init.headers },
      body: init.body ? JSON.stringify(init.body) : undefined,
    });
    const body = (await res.json()) as any;
    if (res.status >= 300) throw Object.assign(new Error(`${path}: ${res.status} ${JSON.stringify(body)}`), { status: res.status });
    return body;
  };
  const account = await call('/v2/accounts', { body: { externalUserId: `bench-${randomUUID()}` } });
  const accountId = account.account.id as string;
  const wallet = privateKeyToAccount(generatePrivateKey()).address;
  const withWallet = await call(`/v2/accounts/${accountId}/connected-wallets`, { body: { chainId: network.chainId, address: wallet } });
  await call(`/v2/accounts/${accountId}/settlement-profile`, {
    method: 'PUT',
    body: { connectedWalletId: withWallet.connectedWallets[0].id },
  });
  const createBody = {
    intent: 'receive',
    amount: '1',
    assetCode: 'USDC',
    chainId: network.chainId,
    destination: { type: 'upa', accountId },
  };
  const ctx: BenchContext = {
    service,
    apiUrl: api.url,
    appId: cred.appId,
    authorization,
    accountId,
    network: { chainId: network.chainId, confirmations: network.confirmations },
    tokenAddress: network.assets[0]!.tokenAddress as Address,
    createBody,
    api: call,
    createPayment: () => call('/v2/payments', { body: createBody, key: randomUUID() }),
    apiCpuSeconds: () => api.cpuSeconds(),
    apiLoopSchedule: () => api.loopSchedule(),
    prioritiseApi: (nice) => prioritiseProcess(api.pid, nice),
    // Its admin listener too on a free port: the API under test holds the default one.
    startApi: async (env) => startApi(await freePort(), { ADMIN_PORT: String(await freePort()), ...env }),
    figures,
    out,
  };

  // Before each phase: what the phases before it left running must not land in its figures.
  const rest = async (phase: PhaseName) => void ((figures.restBefore ??= {})[phase] = await restStack(ctx, phase));

  // Warm up the connection pools, the Prisma plans and the workflow cache.
  for (let i = 0; i < 50; i += 1) await ctx.createPayment();
  out(
    `# Partner Payments benchmark (${figures.date}) on the ${engine} engine, ${COUNT} requests per figure, concurrency ${CONCURRENCY}, ${figures.machine.cpus} cores`,
  );
  // First, on a quiet engine: a backlog can add tasks (one timed out and retried).
  if (runs('engine-work')) await engineWorkPhase(ctx);
  if (runs('ceilings')) {
    await ceilings(ctx, COUNT, CONCURRENCY);
    // The server closes the probe workflows 30 s after their start: that work lands in no figure.
    await new Promise((r) => setTimeout(r, 35_000));
  }
  if (runs('create')) {
    await rest('create');
    await createPhase(ctx, COUNT, CONCURRENCY);
    await createTracesPhase(ctx, Number(process.env.BENCH_TRACED_CREATES ?? 300));
  }
  const baseline = figures.paymentWorkflowStartWithWorker?.perSecond;
  if (figures.apiCreate && baseline) {
    figures.ratio = Math.round((figures.apiCreate.perSecond / baseline) * 100) / 100;
    out(`ratio API create / PaymentWorkflow start with the worker: ${figures.ratio}   (target >= 0.80)`);
  }
  if (runs('settle') && SETTLE > 0) {
    await rest('settle');
    await settlePhase(ctx, SETTLE);
  }
  if (runs('webhooks')) {
    await rest('webhooks');
    await webhooksPhase(ctx, Number(process.env.BENCH_WEBHOOK_RATE ?? 20), Number(process.env.BENCH_WEBHOOK_SECONDS ?? 60));
  }
  if (runs('webhooks-sustained')) {
    await rest('webhooks-sustained');
    await webhooksSustainedPhase(
      ctx,
      Number(process.env.BENCH_WEBHOOK_SUSTAINED_RATE ?? 50),
      Number(process.env.BENCH_WEBHOOK_SUSTAINED_SECONDS ?? 300),
    );
  }
  if (runs('lists')) {
    await rest('lists');
    await listsPhase(ctx, { rows: Number(process.env.BENCH_LIST_ROWS ?? 1_000_000), reads: Number(process.env.BENCH_LIST_READS ?? 200) });
  }
  if (runs('scanner')) {
    await rest('scanner');
    await scannerPhase(ctx, {
      seconds: Number(process.env.BENCH_SCANNER_SECONDS ?? 60),
      baselineSeconds: Number(process.env.BENCH_SCANNER_BASELINE_SECONDS ?? 10),
      blockMs: Number(process.env.BENCH_SCANNER_BLOCK_MS ?? 2000),
      transfersPerBlock: Number(process.env.BENCH_SCANNER_TRANSFERS ?? 200),
      oursPerBlock: Number(process.env.BENCH_SCANNER_OURS ?? 2),
    });
  }
  // Last, so its backlog of workflows can't slow the phases above.
  if (runs('overload')) {
    await rest('overload');
    if (!(await overloadPhase(ctx, OVERLOAD_SECONDS, OVERLOAD_NICE))) process.exitCode = 1;
  }
  figures.apiPeakRssMb = api.peakRssMb();
  out(`API process peak RSS: ${figures.apiPeakRssMb} MB`);
  return figures;
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
