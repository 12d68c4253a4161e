import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { asBenchRun, type BenchFigures, type BenchRun } from '../../bench/figures';
import { engineWorkTable, figuresTable, mergeRuns } from '../../bench/readme-table';

const machine = (loadAverage1m: number) => ({ cpus: 2, model: 'AMD EPYC', memoryGb: 24, node: 'v20.20.2', loadAverage1m });
const latency = (p50Ms: number, p99Ms: number) => ({ p50Ms, p99Ms, maxMs: p99Ms, count: 100 });
const step = (p50Ms: number, p99Ms: number) => latency(p50Ms, p99Ms);

function figures(engine: 'dev' | 'cluster', create: number, startP99: number): BenchFigures {
  return {
    date: '2026-11-26T14:00:00.000Z',
    engine,
    machine: machine(engine === 'dev' ? 2.5 : 3.5),
    noopKoaRoute: { perSecond: 900, latency: latency(30, 200) },
    postgresSingleRowCommit: { perSecond: 3000, latency: latency(8, 60) },
    paymentWorkflowStartWithWorker: { perSecond: 100, latency: latency(280, 400) },
    apiCreate: { perSecond: create, latency: latency(500, 900) },
    ratio: create / 100,
    createAtHalfMaxRate: {
      ratePerSecond: create / 2,
      latency: latency(80, startP99 + 20),
      steps: { idempotency_claim: step(5, 40), workflow_start: step(35, startP99), total: step(60, startP99 + 10) },
    },
  };
}

const run: BenchRun = {
  date: '2026-11-26T14:00:00.000Z',
  machine: machine(2),
  engines: { dev: figures('dev', 90, 240), cluster: figures('cluster', 30, 410) },
};
const rowOf = (table: string, name: string) =>
  table
    .split('\n')
    .find((l) => l.startsWith(`| ${name} |`))
    ?.split(' | ');

describe('the figures table of docs/performance.md', () => {
  test('a column per engine, the target and what limits each figure', () => {
    const table = figuresTable(run);
    assert.match(table, /^\| Figure \| Dev server \(SQLite\) \| Cluster \(4 roles, PostgreSQL\) \| Target \| Limited by \|$/m);
    assert.match(table, /load average 2\.5 at the dev server's start, 3\.5 at the cluster's start/);
    const ratio = rowOf(table, 'ratio API create / fair baseline')!;
    assert.deepEqual(ratio.slice(1, 4), ['0.9 — met', '0.3 — **missed**', '≥ 0.8']);
    const create = rowOf(table, 'API create (closed loop)')!.at(-1)!;
    assert.match(create, /create \/ fair baseline: dev 0\.9, cluster 0\.3/);
    assert.match(create, /ceilings are dev 10×, cluster 30× the create rate/);
    const half = rowOf(table, "create latency at half the API's max rate")!.at(-1)!;
    assert.match(half, /dev `workflow_start` p50 35 ms, p99 240 ms, cluster `workflow_start` p50 35 ms, p99 410 ms/);
  });

  test('webhook events not delivered in time are counted beside the latency of those that were', () => {
    const hooks = (undelivered: number) => ({ ratePerSecond: 20, seconds: 30, latency: latency(500, 900), events: 463, undelivered });
    const withHooks: BenchRun = {
      ...run,
      engines: {
        dev: { ...run.engines.dev!, committedEventToWebhookDelivered: hooks(0) },
        cluster: { ...run.engines.cluster!, committedEventToWebhookDelivered: hooks(47) },
      },
    };
    const row = rowOf(figuresTable(withHooks), 'committed event → webhook delivered')!;
    assert.deepEqual(row.slice(1, 3), [
      '20/s for 30 s: p50 500 ms, p99 900 ms — **missed**',
      '20/s for 30 s: p50 500 ms, p99 900 ms; 47 of 463 not delivered in time — **missed**',
    ]);
  });

  test("overload is met only when refusals come within 50 ms and accepted creates within twice the unloaded p99, and shows the API loop's wait for a core", () => {
    // The unloaded p99 is the half-rate create's: dev 260 ms, cluster 430 ms.
    const overload = (refusedP99: number, acceptedP99: number) => ({
      ratePerSecond: 100,
      seconds: 15,
      count: 1500,
      answers: { '201': 900, '503 service_unavailable': 600 },
      latency: latency(40, acceptedP99),
      refused: latency(5, refusedP99),
      accepted: latency(150, acceptedP99),
      apiLoop: { ranMsPerSecond: 610, waitedMsPerSecond: 240 },
      priority: { api: { nice: -10 }, load: { nice: 0 as const, refused: 'EACCES' } },
      passed: true,
    });
    const loaded: BenchRun = {
      ...run,
      engines: {
        dev: { ...run.engines.dev!, overload: overload(45, 520) },
        cluster: { ...run.engines.cluster!, overload: overload(45, 861) },
      },
    };
    const row = rowOf(figuresTable(loaded), 'overload (creates at twice the max rate)')!;
    assert.match(row[1]!, /refusals p50 5 ms, p99 45 ms; accepted p50 150 ms, p99 520 ms \(unloaded p99 260 ms\)/);
    assert.match(
      row[1]!,
      /the API and the load at nice -10 and 0; the API's event loop per second: 610 ms on a core, 240 ms waiting for one — met$/,
    );
    assert.match(row[2]!, /accepted p50 150 ms, p99 861 ms \(unloaded p99 430 ms\).* — \*\*missed\*\*$/);
    const slowRefusals: BenchRun = { ...loaded, engines: { dev: { ...run.engines.dev!, overload: overload(51, 300) } } };
    assert.match(rowOf(figuresTable(slowRefusals), 'overload (creates at twice the max rate)')![1]!, /— \*\*missed\*\*$/);
  });

  test('a figure only one engine measured reads "not measured" in the other column', () => {
    const onlyDev: BenchRun = { ...run, engines: { dev: { ...run.engines.dev!, apiPeakRssMb: 500 }, cluster: run.engines.cluster! } };
    const rss = rowOf(figuresTable(onlyDev), 'API process peak RSS')!;
    assert.deepEqual(rss.slice(1, 3), ['500 MB', 'not measured']);
  });

  test("a run before the engines reads as the dev server's, and a later run's figures replace an earlier one's per engine", () => {
    const old = asBenchRun({
      date: '2026-11-22T20:32:23.782Z',
      machine: machine(1.17),
      confirmedTransferToSucceeded: latency(945, 1253.9),
    });
    assert.deepEqual(Object.keys(old.engines), ['dev']);
    const merged = mergeRuns([old, run]);
    assert.equal(merged.engines.dev!.confirmedTransferToSucceeded!.p99Ms, 1253.9);
    assert.equal(merged.engines.dev!.apiCreate!.perSecond, 90);
    assert.equal(merged.engines.cluster!.confirmedTransferToSucceeded, undefined);
    const table = figuresTable(merged);
    assert.deepEqual(rowOf(table, 'confirmed transfer → `succeeded` (a block every 100 ms)')!.slice(1, 3), [
      'p50 945 ms, p99 1253.9 ms — **missed**',
      'not measured',
    ]);
  });

  test('engine work: a row per flow and engine, from the last run that counted it on that engine, with its date', () => {
    const work = (workflowTasks: number) => ({
      workflowTypes: ['paymentWorkflow'],
      workflowTasks,
      activityTasks: 8,
      localActivities: 0,
      historyEvents: 72,
    });
    const counted = (date: string, engine: 'dev' | 'cluster', tasks: number): BenchRun => ({
      date,
      machine: machine(3),
      engines: { [engine]: { ...figures(engine, 50, 300), date, engineWork: { receivePaymentSucceeded: work(tasks) } } },
    });
    const vault = {
      workflowTypes: ['paymentWorkflow', 'vaultFundingWorkflow'],
      workflowTasks: 17,
      activityTasks: 10,
      localActivities: 0,
      historyEvents: 92,
      timedOutWorkflowTasks: 1,
    };
    const later = counted('2026-11-29T18:05:00.000Z', 'cluster', 14);
    later.engines.cluster!.engineWork!.vaultFunding = vault;
    const table = engineWorkTable([
      counted('2026-11-28T10:00:00.000Z', 'dev', 12),
      counted('2026-11-29T18:04:00.000Z', 'dev', 13),
      run,
      later,
    ]);
    assert.match(
      table,
      /^One run of each flow, measured on the dev server 2026-11-29 18:04 UTC \(load 2\.5\), on the cluster 2026-11-29 18:05 UTC/,
    );
    const rows = table.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| Flow'));
    assert.deepEqual(rows, [
      '| receive Payment that succeeds | Dev server | `paymentWorkflow` | 13 | 8 | 0 | 72 |',
      '| receive Payment that succeeds | Cluster | `paymentWorkflow` | 14 | 8 | 0 | 72 |',
      '| vault funding of a Payment, with the Payment | Cluster | `paymentWorkflow` + `vaultFundingWorkflow` | 17 (and 1 timed out) | 10 | 0 | 92 |',
    ]);
    assert.match(engineWorkTable([run]), /^Not measured yet/);
  });
});
