import path from 'node:path';
import { parseArgs } from 'node:util';
import { makePlan, type FaultKind } from './plan';
import { runPlan } from './run';
import { stackSettings, startStack, type Stack, type TemporalEngine } from './stack';
import { verifyRun } from './verify';
import { runMain } from './run-main';

/**
 * `npm run simulate -- --seed <n> --payments <n> --deposits <n>`: a seeded run of the whole service on
 * the embedded stack, with faults, that ends by checking every Payment and deposit, the workflows and
 * the books. Prints its seed first; exits 1 listing the failures (and how to replay the seed).
 */
const USAGE = `usage: npm run simulate -- [--seed <n>] [--payments <n>] [--deposits <n>] [--deadline-seconds <n>] [--engine dev|cluster]
  --engine cluster runs Temporal Server's four roles over PostgreSQL (built by \`node scripts/setup.mjs --for cluster\`)
  instead of the dev server.
  DATA_DIR (default <repo>/.data/simulate) holds the run's PostgreSQL cluster, logs and custody seed.
  EMBEDDED_POSTGRES_PORT, EMBEDDED_TEMPORAL_PORT, TEMPORAL_UI_PORT, EMBEDDED_ANVIL_PORT, PORT: a free port each when unset.`;

function int(value: string | undefined, name: string, fallback: number, min = 0): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value)))
    throw new Error(`--${name} takes an integer ≥ ${min}, got ${value}\n${USAGE}`);
  return Number(value);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seed: { type: 'string' },
      payments: { type: 'string' },
      deposits: { type: 'string' },
      'deadline-seconds': { type: 'string' },
      engine: { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const seed = int(values.seed, 'seed', Math.floor(Math.random() * 2 ** 31));
  const payments = int(values.payments, 'payments', 40);
  const deposits = int(values.deposits, 'deposits', Math.ceil(payments / 10));
  const deadlineMs = int(values['deadline-seconds'], 'deadline-seconds', 180 + payments, 1) * 1000;
  const engine = (values.engine ?? 'dev') as TemporalEngine;
  if (engine !== 'dev' && engine !== 'cluster') throw new Error(`--engine takes dev or cluster, got ${values.engine}\n${USAGE}`);
  const started = Date.now();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const replay = `npm run simulate -- --seed ${seed} --payments ${payments} --deposits ${deposits}`;
  out(
    `simulate: seed ${seed}, ${payments} Payments, ${deposits} deposits on the ${engine} engine (replay: ${replay}${engine === 'cluster' ? ' --engine cluster' : ''})`,
  );

  const { dataDir, ports, config } = await stackSettings({
    defaultDataDir: path.join('.data', 'simulate'),
    // The partner here is one app sending many requests at once: the per-credential quota is not under test.
    overrides: { RATE_LIMIT_POINTS: '1000000', API_DATABASE_POOL_MAX: '20' },
  });

  const plan = makePlan(seed, { payments, deposits });
  const kinds = plan.faults.reduce<Partial<Record<FaultKind, number>>>((acc, f) => ({ ...acc, [f.kind]: (acc[f.kind] ?? 0) + 1 }), {});
  out(
    `plan ${plan.digest}: ${plan.accounts} accounts, faults ${JSON.stringify(kinds)}, ${plan.bursts.length} one-block bursts; data in ${dataDir}`,
  );

  let stack: Stack | undefined;
  const stopAll = async () => {
    const s = stack;
    stack = undefined;
    await s?.stop();
  };
  const onSignal = (sig: string) => {
    out(`simulate: ${sig}, stopping`);
    void stopAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    stack = await startStack({ config, dataDir, ports, log: (line) => out(`  ${line}`), temporalEngine: engine });
    const runStarted = Date.now();
    const record = await runPlan(stack, plan, out);
    const trafficMs = Date.now() - runStarted;
    const verdict = await verifyRun(stack, plan, record, { deadlineMs, log: out });

    const summary = {
      seed,
      payments,
      deposits,
      plan: plan.digest,
      ok: verdict.failures.length === 0,
      wallSeconds: Math.round((Date.now() - started) / 1000),
      trafficSeconds: Math.round(trafficMs / 1000),
      settleSeconds: Math.round(verdict.settledInMs / 1000),
      paymentsByStatus: verdict.paymentsByStatus,
      paymentsByScenario: verdict.paymentsByScenario,
      depositsByStatus: verdict.depositsByStatus,
      incidents: verdict.incidents,
      // Faults made (a reorg anvil would not make is left out and noted).
      faults: record.faults
        .filter((f) => !f.skipped)
        .reduce<Record<string, number>>((acc, f) => ({ ...acc, [f.fault.kind]: (acc[f.fault.kind] ?? 0) + 1 }), {}),
      workerStarts: stack.worker.starts,
      transfers: record.driver.sent,
      apiRetries: record.client.retries,
      detectionMs: verdict.detectionMs,
      ledger: verdict.ledger,
      reconcile: verdict.reconcile,
      alertsRaised: verdict.alertsRaised,
      criticalAlerts: verdict.criticalAlerts,
      openAlerts: verdict.openAlerts,
      held: verdict.held,
      failureKinds: verdict.failureKinds,
      failures: verdict.failures,
    };
    out('');
    out(`Payments by scenario: ${JSON.stringify(verdict.paymentsByScenario)}`);
    out(
      `Payments: ${JSON.stringify(verdict.paymentsByStatus)}; deposits: ${JSON.stringify(verdict.depositsByStatus)}; incidents ${verdict.incidents}`,
    );
    out(
      `transfers noticed by the service ${verdict.detectionMs.p50} ms after broadcast (p50), p99 ${verdict.detectionMs.p99} ms, max ${verdict.detectionMs.max} ms`,
    );
    out(
      `ledger check: ${verdict.ledger.problems} problems (${verdict.ledger.postings} postings); ledger reconcile: ${verdict.reconcile.differences} differences (${verdict.reconcile.checked} addresses)`,
    );
    for (const h of verdict.held) out(`held: ${h}`);
    out(`operator alerts raised during the run: ${JSON.stringify(verdict.alertsRaised)}`);
    for (const a of verdict.criticalAlerts) out(`critical alert: ${a}`);
    for (const a of verdict.openAlerts) out(`open alert: ${a}`);
    if (summary.ok) {
      out(`simulate: seed ${seed} passed in ${summary.wallSeconds} s`);
    } else {
      out(`simulate: seed ${seed} FAILED (${verdict.failures.length}):`);
      for (const f of verdict.failures) out(`  - ${f}`);
      out('by kind:');
      for (const [kind, n] of Object.entries(verdict.failureKinds).sort((a, b) => b[1] - a[1])) out(`  ${n} × ${kind}`);
      out(`replay: ${replay}  (the plan replays exactly; where faults land in the work in flight may differ)`);
    }
    out(`summary: ${JSON.stringify(summary)}`);
    return summary.ok ? 0 : 1;
  } catch (err) {
    out(`simulate: seed ${seed} FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    out(`replay: ${replay}`);
    return 1;
  } finally {
    await stopAll();
  }
}

runMain('simulate', main);
