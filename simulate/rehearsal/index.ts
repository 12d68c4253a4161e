import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/config';
import { createApp } from '../../src/domain/apps/apps';
import { createWebhookEndpoint } from '../../src/domain/webhooks/endpoints';
import { stackSettings } from '../stack';
import { WebhookReceiver } from '../webhook-receiver';
import { runMain } from '../run-main';
import { checkRehearsal, waitForRest } from './checks';
import { treasuryDrill } from './treasury-drill';
import { faultPlan, runFaults } from './faults';
import { FLOWS, prepareParties, ROUND, type FlowContext } from './flows';
import { recoverIncidents } from './operator';
import { Recorder, RehearsalPartner } from './partner';
import { PLANTS, type Plant } from './plant';
import { receiverCertificate } from './production';
import { outagesOf, type RehearsalResult } from './result';
import { startRehearsalStack, type RehearsalStack } from './stack';
import { BOUNDS, type Outage } from './verdicts';

/**
 * `npm run rehearsal`: production on one machine (simulate/rehearsal/stack.ts, DEPLOYMENT=production),
 * a partner load through both API processes, and meanwhile every part killed with SIGKILL once: an
 * API process, a worker, each Temporal role and PostgreSQL's postmaster (simulate/rehearsal/faults.ts).
 * Then everything must come to rest and check out (simulate/rehearsal/checks.ts). Prints p50/p99 per
 * operation and, last, the result as one bare JSON line (simulate/rehearsal/result.ts).
 */
const USAGE = `usage: npm run rehearsal -- [--seconds <n>] [--rate <n>] [--loops <n>] [--rest-seconds <n>] [--plant <fault>[,<fault>…]]
  --seconds       how long the partner load runs at least (default 600; CI runs 120); the faults land at 10% to 80% of it, one after another, and the load runs until the last one's probe Payment succeeded
  --rate          partner flows started per second at most (default 1.5, a rate this 2-core machine carries)
  --loops         concurrent partner loops (default 3)
  --rest-seconds  how long everything may take to come to rest after the load (default 600)
  --plant         ${PLANTS.join('|')} (comma-separated for several): plants each fault in what the run observed, to show its checks fail on it (the run must fail)
  DATA_DIR (default <repo>/.data/rehearsal) holds its PostgreSQL cluster, logs (<DATA_DIR>/logs) and keys.`;

/** Flows started per second by default: unpaced, the loops outran what 2 cores carry (docs/decisions/testing-and-tooling.md). */
const DEFAULT_RATE = 1.5;

function rate(value: string | undefined): number {
  if (value === undefined) return DEFAULT_RATE;
  if (!/^\d+(\.\d+)?$/.test(value) || Number(value) <= 0) throw new Error(`--rate takes a positive number, got ${value}\n${USAGE}`);
  return Number(value);
}

function int(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new Error(`--${name} takes a positive integer, got ${value}\n${USAGE}`);
  return Number(value);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Flow n starts no earlier than n / perSecond into the load (and later when its loop is still busy), until `done()`. */
async function runLoad(
  ctx: FlowContext,
  pace: { loops: number; perSecond: number; fromMs: number; done: () => boolean },
  errors: string[],
  counts: Record<string, number>,
): Promise<void> {
  await Promise.all(
    Array.from({ length: pace.loops }, async (_, loop) => {
      for (let n = loop; !pace.done(); n += pace.loops) {
        const due = pace.fromMs + (n / pace.perSecond) * 1000;
        if (due > Date.now()) await sleep(due - Date.now());
        if (pace.done()) break;
        const flow = ROUND[n % ROUND.length]!;
        try {
          await FLOWS[flow](ctx, n);
          counts[flow] = (counts[flow] ?? 0) + 1;
        } catch (err) {
          errors.push(`${flow} #${n}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }),
  );
}

function plantsOf(value: string | undefined): Plant[] {
  const plants = (value ?? '').split(',').filter(Boolean);
  const unknown = plants.filter((p) => !(PLANTS as readonly string[]).includes(p));
  if (unknown.length > 0) throw new Error(`--plant takes ${PLANTS.join(', ')}, got ${unknown.join(', ')}\n${USAGE}`);
  return plants as Plant[];
}

const commitOf = () => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
};

interface Options {
  loadMs: number;
  loops: number;
  perSecond: number;
  restMs: number;
  plants: Plant[];
}

function options(): Options | undefined {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string' },
      rate: { type: 'string' },
      loops: { type: 'string' },
      'rest-seconds': { type: 'string' },
      plant: { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) return undefined;
  return {
    loadMs: int(values.seconds, 'seconds', 600) * 1000,
    loops: int(values.loops, 'loops', 3),
    perSecond: rate(values.rate),
    restMs: int(values['rest-seconds'], 'rest-seconds', 600) * 1000,
    plants: plantsOf(values.plant),
  };
}

type Receivers = Record<'sandbox' | 'production', WebhookReceiver>;

/** The two partner apps, each with an endpoint at its receiver; answers their ids and clients. */
async function partnerApps(stack: RehearsalStack, receivers: Receivers, recorder: Recorder) {
  const apps: Record<'sandbox' | 'production', string> = { sandbox: '', production: '' };
  const partners = {} as Record<'sandbox' | 'production', RehearsalPartner>;
  for (const environment of ['sandbox', 'production'] as const) {
    const credential = await createApp(stack.db.prisma, { name: `rehearsal-${environment}`, environment }, stack.environments.apiVersion);
    const endpoint = await createWebhookEndpoint(
      // The production policy: https, and a private host only when WEBHOOKS_TRUSTED_DESTINATIONS names it.
      { prisma: stack.db.prisma, serviceSecret: stack.serviceSecret, destinations: loadConfig(stack.serviceEnv).webhooks },
      credential.appId,
      { url: receivers[environment].url },
    );
    receivers[environment].useSecret(endpoint.signingSecret);
    apps[environment] = credential.appId;
    partners[environment] = RehearsalPartner.basic(stack.apiUrls, recorder, credential);
  }
  return { apps, partners };
}

async function main(): Promise<number> {
  const opts = options();
  if (!opts) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const started = Date.now();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const { dataDir, ports, config } = await stackSettings({ defaultDataDir: path.join('.data', 'rehearsal') });
  out(
    `rehearsal: at least ${opts.loadMs / 1000} s of load, at most ${opts.perSecond} flows/s in ${opts.loops} loops; data and logs in ${dataDir}`,
  );

  const tls = receiverCertificate(path.join(dataDir, 'tls'));
  const cert = { key: readFileSync(tls.keyFile), cert: readFileSync(tls.certFile) };
  const receivers: Receivers = {
    sandbox: await WebhookReceiver.start({ tls: cert }),
    production: await WebhookReceiver.start({ tls: cert }),
  };
  let stack: RehearsalStack | undefined;
  const stopAll = async () => {
    const s = stack;
    stack = undefined;
    await s?.stop();
    for (const r of Object.values(receivers)) await r.stop();
  };
  process.once('SIGINT', () => void stopAll().finally(() => process.exit(130)));
  process.once('SIGTERM', () => void stopAll().finally(() => process.exit(130)));
  try {
    stack = await startRehearsalStack({
      config,
      dataDir,
      postgresPort: ports.postgres,
      temporalPort: ports.temporal,
      receivers: Object.values(receivers).map((r) => r.hostPort),
      tls,
      log: (line) => out(`  ${line}`),
    });
    const result = await rehearse(stack, receivers, opts, started, out);
    const latencies = result.latencies as Record<string, { n: number; p50: number; p99: number }>;
    out('');
    out('latency per operation (ms, as the partner saw each answer):');
    for (const [op, l] of Object.entries(latencies))
      out(`  ${op.padEnd(58)} n=${String(l.n).padStart(5)}  p50 ${String(l.p50).padStart(5)}  p99 ${String(l.p99).padStart(6)}`);
    out(result.ok ? `rehearsal passed in ${result.seconds} s` : `rehearsal FAILED (${result.failures.length}):`);
    for (const f of result.failures) out(`  - ${f}`);
    out(JSON.stringify(result));
    return result.ok ? 0 : 1;
  } catch (err) {
    out(`rehearsal FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  } finally {
    await stopAll();
  }
}

/** Set-up through the API, the load beside the faults, the recoveries, rest, and the checks. */
async function rehearse(stack: RehearsalStack, receivers: Receivers, opts: Options, started: number, out: (line: string) => void) {
  const recorder = new Recorder();
  const { apps, partners } = await partnerApps(stack, receivers, recorder);
  let serial = 0;
  const key = (what: string) => `rehearsal-${started}-${what}-${(serial += 1)}`;
  const parties = await prepareParties({ stack, key }, partners.sandbox, partners.production);
  out(`parties ready after ${Math.round((Date.now() - started) / 1000)} s; load starts`);

  const ctx: FlowContext = { stack, parties, key, paidForRefund: [], planned: [], plannedDeposits: [], recoveries: [], releasedHolds: [] };
  const loadStarted = Date.now();
  const errors: string[] = [];
  const counts: Record<string, number> = {};
  const outages: Outage[] = [];
  let faultsDone = false;
  const done = () => faultsDone && Date.now() >= loadStarted + opts.loadMs;
  await Promise.all([
    runLoad(ctx, { loops: opts.loops, perSecond: opts.perSecond, fromMs: loadStarted, done }, errors, counts),
    runFaults(
      ctx,
      { faults: faultPlan(stack), receiver: receivers.production, startedAt: loadStarted, loadMs: opts.loadMs },
      outages,
      out,
    ).finally(() => void (faultsDone = true)),
    treasuryDrill(ctx, { startedAt: loadStarted, loadMs: opts.loadMs }, out).then((failures) => void errors.push(...failures)),
  ]);
  const loadSeconds = Math.round((Date.now() - loadStarted) / 1000);
  out(`load done after ${loadSeconds} s: ${JSON.stringify(counts)}; ${errors.length} flow errors; recovering incidents`);
  errors.push(...(await recoverIncidents(ctx, opts.restMs, out)));
  const restless = await waitForRest(stack, opts.restMs, out);
  const verdict = await checkRehearsal({
    stack,
    apps,
    receivers,
    recorder,
    outages,
    planned: ctx.planned,
    plannedDeposits: ctx.plannedDeposits,
    releasedHolds: ctx.releasedHolds,
    restless,
    flowErrors: errors,
    restMs: opts.restMs,
    plants: opts.plants,
  });
  const result: RehearsalResult = {
    ok: verdict.failures.length === 0,
    deployment: 'production',
    commit: commitOf(),
    date: new Date(started).toISOString().slice(0, 10),
    seconds: Math.round((Date.now() - started) / 1000),
    loadSeconds,
    loops: opts.loops,
    flowsPerSecond: opts.perSecond,
    plants: opts.plants,
    flows: counts,
    bounds: BOUNDS,
    outages: outagesOf(outages),
    failovers: recorder.failovers,
    unavailable503: recorder.unavailable.length,
    ...verdict.figures,
    latencies: recorder.percentiles(),
    failures: verdict.failures,
  };
  return result;
}

runMain('rehearsal', main);
