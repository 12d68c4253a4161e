import path from 'node:path';
import { parseArgs } from 'node:util';
import { createApp } from '../../src/domain/apps/apps';
import { createWebhookEndpoint } from '../../src/domain/webhooks/endpoints';
import { stackSettings } from '../stack';
import { WebhookReceiver } from '../webhook-receiver';
import { runMain } from '../run-main';
import { checkRehearsal, waitForRest, type Outage } from './checks';
import { FLOWS, prepareParties, ROUND, type FlowContext } from './flows';
import { Recorder, RehearsalPartner } from './partner';
import { startRehearsalStack, type RehearsalStack } from './stack';

/**
 * `npm run rehearsal`: production on one machine (simulate/rehearsal/stack.ts), a partner load
 * through both API processes for a set time, and meanwhile an API process, a worker and the Temporal
 * cluster's history service killed with SIGKILL and PostgreSQL restarted. Then everything must come to
 * rest and check out (simulate/rehearsal/checks.ts). Prints p50/p99 per operation and one JSON line.
 */
const USAGE = `usage: npm run rehearsal -- [--seconds <n>] [--rate <n>] [--loops <n>] [--rest-seconds <n>]
  --seconds       how long the partner load runs (default 600; CI runs 120); the faults land at 15%, 35%, 55% and 75% of it
  --rate          partner flows started per second at most (default 1.5, a rate this 2-core machine carries)
  --loops         concurrent partner loops (default 3)
  --rest-seconds  how long everything may take to come to rest after the load (default 600)
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

/** The faults, in order, at their share of the load's time: each one's part must come back. */
function faults(stack: RehearsalStack): Array<{ at: number; what: string; run: () => Promise<void> }> {
  const [api, worker] = [stack.apis[0]!, stack.workers[0]!];
  return [
    { at: 0.15, what: `SIGKILL ${api.name}`, run: async () => (await api.kill9(), api.start(), await api.ready()) },
    { at: 0.35, what: `SIGKILL ${worker.name}`, run: async () => (await worker.kill9(), worker.start(), await worker.ready()) },
    {
      at: 0.55,
      what: 'SIGKILL the Temporal history service',
      run: async () => (stack.cluster.kill('history'), await stack.cluster.restart('history')),
    },
    { at: 0.75, what: 'restart PostgreSQL', run: async () => void (await stack.restartPostgres()) },
  ];
}

async function runFaults(
  stack: RehearsalStack,
  started: number,
  loadMs: number,
  outages: Outage[],
  log: (line: string) => void,
): Promise<void> {
  for (const f of faults(stack)) {
    const wait = started + f.at * loadMs - Date.now();
    if (wait > 0) await sleep(wait);
    const at = Date.now();
    try {
      await f.run();
      outages.push({ what: f.what, at, backAt: Date.now() });
      log(`fault: ${f.what}: back after ${((Date.now() - at) / 1000).toFixed(1)} s`);
    } catch (err) {
      outages.push({ what: f.what, at, backAt: Date.now(), error: err instanceof Error ? err.message : String(err) });
      log(`fault: ${f.what}: did NOT come back: ${String(err)}`);
    }
  }
}

/** Flow n starts no earlier than n / perSecond into the load (and later when its loop is still busy). */
async function runLoad(
  ctx: FlowContext,
  pace: { loops: number; perSecond: number; fromMs: number; untilMs: number },
  errors: string[],
  counts: Record<string, number>,
): Promise<void> {
  await Promise.all(
    Array.from({ length: pace.loops }, async (_, loop) => {
      for (let n = loop; Date.now() < pace.untilMs; n += pace.loops) {
        const due = pace.fromMs + (n / pace.perSecond) * 1000;
        if (due >= pace.untilMs) break;
        if (due > Date.now()) await sleep(due - Date.now());
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

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string' },
      rate: { type: 'string' },
      loops: { type: 'string' },
      'rest-seconds': { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const loadMs = int(values.seconds, 'seconds', 600) * 1000;
  const loops = int(values.loops, 'loops', 3);
  const perSecond = rate(values.rate);
  const restMs = int(values['rest-seconds'], 'rest-seconds', 600) * 1000;
  const started = Date.now();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const { dataDir, ports, config } = await stackSettings({ defaultDataDir: path.join('.data', 'rehearsal') });
  out(`rehearsal: ${loadMs / 1000} s of load, at most ${perSecond} flows/s in ${loops} loops; data and logs in ${dataDir}`);

  const receivers = { sandbox: await WebhookReceiver.start(), production: await WebhookReceiver.start() };
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
      log: (line) => out(`  ${line}`),
    });
    const recorder = new Recorder();
    const apps: Record<'sandbox' | 'production', string> = { sandbox: '', production: '' };
    const partners = {} as Record<'sandbox' | 'production', RehearsalPartner>;
    for (const environment of ['sandbox', 'production'] as const) {
      const credential = await createApp(stack.db.prisma, { name: `rehearsal-${environment}`, environment }, stack.environments.apiVersion);
      const endpoint = await createWebhookEndpoint(
        { prisma: stack.db.prisma, serviceSecret: stack.serviceSecret, destinations: { allowPrivateDestinations: true } },
        credential.appId,
        { url: receivers[environment].url },
      );
      receivers[environment].useSecret(endpoint.signingSecret);
      apps[environment] = credential.appId;
      partners[environment] = RehearsalPartner.basic(stack.apiUrls, recorder, credential);
    }
    let serial = 0;
    const key = (what: string) => `rehearsal-${started}-${what}-${(serial += 1)}`;
    const parties = await prepareParties({ stack, key }, partners.sandbox, partners.production);
    out(`parties ready after ${Math.round((Date.now() - started) / 1000)} s; load starts`);

    const ctx: FlowContext = { stack, parties, key, paidForRefund: [] };
    const loadStarted = Date.now();
    const errors: string[] = [];
    const counts: Record<string, number> = {};
    const outages: Outage[] = [];
    await Promise.all([
      runLoad(ctx, { loops, perSecond, fromMs: loadStarted, untilMs: loadStarted + loadMs }, errors, counts),
      runFaults(stack, loadStarted, loadMs, outages, out),
    ]);
    out(`load done: ${JSON.stringify(counts)}; ${errors.length} flow errors; resting`);

    const restless = await waitForRest(stack, restMs, out);
    const verdict = await checkRehearsal({ stack, apps, receivers, recorder, outages, restless, flowErrors: errors, log: out });
    const latencies = recorder.percentiles();
    out('');
    out('latency per operation (ms, as the partner saw each answer):');
    for (const [op, l] of Object.entries(latencies))
      out(`  ${op.padEnd(58)} n=${String(l.n).padStart(5)}  p50 ${String(l.p50).padStart(5)}  p99 ${String(l.p99).padStart(6)}`);
    const summary = {
      ok: verdict.failures.length === 0,
      seconds: Math.round((Date.now() - started) / 1000),
      loadSeconds: loadMs / 1000,
      loops,
      flowsPerSecond: perSecond,
      flows: counts,
      outages: outages.map((o) => ({ what: o.what, backAfterMs: o.backAt - o.at, ...(o.error ? { error: o.error } : {}) })),
      failovers: recorder.failovers,
      unavailable503: recorder.unavailable.length,
      ...verdict.figures,
      latencies,
      failures: verdict.failures,
    };
    out(summary.ok ? `rehearsal passed in ${summary.seconds} s` : `rehearsal FAILED (${verdict.failures.length}):`);
    for (const f of verdict.failures) out(`  - ${f}`);
    out(`summary: ${JSON.stringify(summary)}`);
    return summary.ok ? 0 : 1;
  } catch (err) {
    out(`rehearsal FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  } finally {
    await stopAll();
  }
}

runMain('rehearsal', main);
