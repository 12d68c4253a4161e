import { readFileSync, writeFileSync } from 'node:fs';
import {
  asBenchRun,
  backlogFlat,
  ENGINE_WORK_FLOWS,
  ENGINES,
  type BenchFigures,
  type BenchRun,
  type Engine,
  type EngineWorkFlow,
} from './figures';
import type { FlowEngineWork } from './engine-work';
import type { Latency, Rate } from './measure';

/**
 * `npm run bench:readme -- <bench output>`: rewrites the figures table of docs/performance.md
 * (between its bench-figures markers) from the last JSON line of `npm run bench -- --json` runs: a
 * column per engine measured, and what limits each figure, with the date and the machine; and the
 * engine work per flow (between its bench-engine-work markers). The tables are never edited by hand.
 */
const START = '<!-- bench-figures:start -->';
const END = '<!-- bench-figures:end -->';
const ENGINE_WORK_START = '<!-- bench-engine-work:start -->';
const ENGINE_WORK_END = '<!-- bench-engine-work:end -->';
/** The page holding the figures table (relative to the repository root, where npm runs the script). */
const FIGURES_PAGE = 'docs/performance.md';

const ENGINE_COLUMN: Record<Engine, string> = { dev: 'Dev server (SQLite)', cluster: 'Cluster (4 roles, PostgreSQL)' };

type Engines = Partial<Record<Engine, BenchFigures>>;

/** One figure of one engine's run; `limit` says what bounds it, from every engine's figures. */
interface FigureRow {
  name: string;
  measured: string;
  target: string;
  met?: boolean;
  limit: (engines: Engines) => string;
}

const lat = (l?: Latency) => (l ? `p50 ${l.p50Ms} ms, p99 ${l.p99Ms} ms` : 'not measured');
const rate = (r?: Rate) => (r ? `${r.perSecond}/s (${lat(r.latency)})` : 'not measured');
const verdict = (ok: boolean | undefined) => (ok === undefined ? '' : ok ? ' — met' : ' — **missed**');
const fixed = (text: string) => () => text;

/** `dev x, cluster y` of one number per engine measured. */
function perEngine(engines: Engines, pick: (f: BenchFigures) => string | undefined): string {
  return ENGINES.flatMap((e) => {
    const v = engines[e] && pick(engines[e]);
    return v === undefined ? [] : [`${e} ${v}`];
  }).join(', ');
}

const ENGINE_LIMIT =
  'the engine on 2 shared cores: the dev server has one SQLite writer; the cluster spreads a start over frontend, history and matching, each a process, and PostgreSQL';

/** The create path: how far below its ceilings and the engine it runs, per engine. */
function createLimit(engines: Engines): string {
  const ratios = perEngine(engines, (f) => (f.ratio === undefined ? undefined : String(f.ratio)));
  const headroom = perEngine(engines, (f) => {
    const ceiling = Math.min(f.noopKoaRoute?.perSecond ?? Infinity, f.postgresSingleRowCommit?.perSecond ?? Infinity);
    return f.apiCreate && Number.isFinite(ceiling) ? `${Math.round(ceiling / f.apiCreate.perSecond)}×` : undefined;
  });
  return (
    `the engine's workflow-start throughput and the cores it shares with the API and PostgreSQL` +
    (ratios ? ` (create / fair baseline: ${ratios}` : ' (') +
    (headroom ? `; the no-op route and PostgreSQL commit ceilings are ${headroom} the create rate)` : ')')
  );
}

/** The slowest step inside the API at half the maximum rate, per engine: from its traces, or an older run's Server-Timing. */
function slowestStep(engines: Engines): string {
  const steps = perEngine(engines, (f) => {
    const measured = f.createTraced?.parts ?? f.createAtHalfMaxRate?.steps ?? {};
    const all = Object.entries(measured).filter(([name]) => name.startsWith('step.') || (!f.createTraced && name !== 'total'));
    const [name, l] = all.sort(([, a], [, b]) => b.p99Ms - a.p99Ms)[0] ?? [];
    return name && l ? `\`${name}\` p50 ${l.p50Ms} ms, p99 ${l.p99Ms} ms` : undefined;
  });
  return steps ? `the slowest step inside the API: ${steps}` : 'the workflow start (its steps not measured in this run)';
}

export function figureRows(f: BenchFigures): FigureRow[] {
  const half = f.createAtHalfMaxRate;
  const settle = f.confirmedTransferToSucceeded;
  const hooks = f.committedEventToWebhookDelivered;
  return [
    {
      name: 'no-op Koa route (ceiling)',
      measured: rate(f.noopKoaRoute),
      target: '',
      limit: fixed("the API process's one event loop (Koa, JSON, loopback)"),
    },
    {
      name: 'PostgreSQL single-row commit (ceiling)',
      measured: rate(f.postgresSingleRowCommit),
      target: '',
      limit: fixed("PostgreSQL's WAL flush per commit"),
    },
    {
      name: 'PaymentWorkflow start with the worker running (the fair baseline)',
      measured: rate(f.paymentWorkflowStartWithWorker),
      target: '',
      limit: fixed(ENGINE_LIMIT),
    },
    {
      name: 'bare `workflow.start` without a worker',
      measured: rate(f.bareWorkflowStartWithoutWorker),
      target: '',
      limit: fixed(ENGINE_LIMIT),
    },
    {
      name: 'API create (closed loop)',
      measured: `${rate(f.apiCreate)}; API CPU ${f.apiCpuMsPerCreate ?? '?'} ms per create`,
      target: '',
      limit: createLimit,
    },
    {
      name: 'ratio API create / fair baseline',
      measured: f.ratio === undefined ? 'not measured' : String(f.ratio),
      target: '≥ 0.8',
      ...(f.ratio === undefined ? {} : { met: f.ratio >= 0.8 }),
      limit: fixed("the 2 shared cores: each ms of CPU the API and PostgreSQL spend per create is taken from the engine's baseline"),
    },
    {
      name: "create latency at half the API's max rate",
      measured: half ? `${half.ratePerSecond}/s: ${lat(half.latency)}` : 'not measured',
      target: 'p99 ≤ 50 ms',
      ...(half ? { met: half.latency.p99Ms <= 50 } : {}),
      limit: slowestStep,
    },
    {
      name: 'confirmed transfer → `succeeded` (a block every 100 ms)',
      measured: lat(settle),
      target: 'p99 ≤ 1 s',
      ...(settle ? { met: settle.p99Ms <= 1000 } : {}),
      limit: fixed(
        "the Payment's sequential workflow tasks and activities (about six) on the engine, and two blocks for the confirmations",
      ),
    },
    {
      name: 'committed event → webhook delivered',
      measured: hooks
        ? `${hooks.ratePerSecond}/s for ${hooks.seconds} s: ${lat(hooks.latency)}${hooks.undelivered ? `; ${hooks.undelivered} of ${hooks.events} not delivered in time` : ''}`
        : 'not measured',
      target: 'p99 ≤ 500 ms at 20/s for 60 s',
      ...(hooks ? { met: hooks.latency.p99Ms <= 500 } : {}),
      limit: fixed(WEBHOOK_LIMIT),
    },
    sustainedWebhooksRow(f.webhooksSustained),
    ...listRows(f.listP99),
    scannerRow(f.scannerUnderTraffic),
    {
      name: 'API process peak RSS',
      measured: f.apiPeakRssMb === undefined ? 'not measured' : `${f.apiPeakRssMb} MB`,
      target: '',
      limit: fixed('the API process alone: Node, the Prisma client, the Temporal client'),
    },
    overloadRow(f.overload, f.createAtHalfMaxRate?.latency.p99Ms),
  ];
}

const WEBHOOK_LIMIT =
  "one workflow start and one workflow task per delivery on the engine's one SQLite writer, beside the API's commits, on 2 shared cores (the pass runs in the worker's listener; the start is eager)";

function sustainedWebhooksRow(w: BenchFigures['webhooksSustained']): FigureRow {
  const row = {
    name: 'committed event → webhook delivered, sustained',
    target: 'p99 ≤ 1 s at 50/s for 5 min, no backlog growth',
    limit: fixed(WEBHOOK_LIMIT),
  };
  if (!w) return { ...row, measured: 'not measured' };
  const backlog = w.backlog ? `; backlog mean ${w.backlog.firstThirdMean} first third, ${w.backlog.lastThirdMean} last third` : '';
  const load = w.load ? `; load ${w.load.start} → ${w.load.end}` : '';
  const measured = `${w.ratePerSecond}/s for ${w.seconds} s: ${lat(w.latency)}, max ${w.latency.maxMs} ms; ${w.undelivered ?? '?'} of ${w.events ?? '?'} not delivered in time${backlog}${load}`;
  const met = w.latency.p99Ms <= 1000 && w.undelivered === 0 && (w.backlog ? backlogFlat(w.backlog, w.ratePerSecond) : false);
  return { ...row, measured, ...(w.ratePerSecond >= 50 && w.seconds >= 300 ? { met } : {}) };
}

/** Met: nothing bad, refusals p99 within 50 ms, and accepted creates p99 within twice the unloaded one (the half-rate create's). */
function overloadRow(o: BenchFigures['overload'], unloadedP99?: number): FigureRow {
  const answers = o
    ? Object.entries(o.answers)
        .map(([k, v]) => `${k} ×${v}`)
        .join(', ')
    : '';
  const priority = o?.priority ? `; the API and the load at nice ${o.priority.api.nice} and ${o.priority.load.nice}` : '';
  const loop = o?.apiLoop
    ? `${priority}; the API's event loop per second: ${o.apiLoop.ranMsPerSecond} ms on a core, ${o.apiLoop.waitedMsPerSecond} ms waiting for one`
    : '';
  const unloaded = unloadedP99 === undefined ? '' : ` (unloaded p99 ${unloadedP99} ms)`;
  const split = o?.refused ? `refusals ${lat(o.refused)}; accepted ${o.accepted ? lat(o.accepted) : '—'}${unloaded}` : lat(o?.latency);
  const refusedFast = !o?.refused || o.refused.count === 0 || o.refused.p99Ms <= 50;
  const acceptedNear = !o?.accepted || unloadedP99 === undefined || o.accepted.count === 0 || o.accepted.p99Ms <= 2 * unloadedP99;
  return {
    name: 'overload (creates at twice the max rate)',
    measured: o ? `${o.ratePerSecond}/s for ${o.seconds} s: ${answers}; ${split}${loop}` : 'not measured',
    target: 'no 500, none hung; refusals p99 ≤ 50 ms; accepted p99 ≤ 2 × unloaded',
    ...(o ? { met: o.passed && refusedFast && acceptedNear } : {}),
    limit: fixed(
      "refusals: the API's event loop, its own work and its wait for a core (measured); accepted: the gate keeps at least the pool's size in flight, which the engine's rate on 2 cores turns into their time",
    ),
  };
}

/** The chain scanner under mainnet-shaped blocks: its lag (blocks and ms) and the CPU per foreign transfer. */
function scannerRow(s: BenchFigures['scannerUnderTraffic']): FigureRow {
  const row = {
    name: 'chain scanner lag under mainnet-shaped traffic',
    target: 'p99 ≤ 2 blocks for 10 min',
    limit: fixed(
      "the scan's CPU per transfer against the chain's 2 s block time; no workflow is on the path, so a lag is the cores being busy elsewhere",
    ),
  };
  if (!s) return { ...row, measured: 'not measured' };
  const measured =
    `${s.transfersPerBlock} transfers per ${s.blockMs / 1000} s block (${s.oursPerBlock} ours) for ${s.seconds} s: ` +
    `p50 ${s.lagBlocks.p50}, p99 ${s.lagBlocks.p99}, max ${s.lagBlocks.max} blocks (${lat(s.lag)}); ` +
    `${s.scanCpuUsPerTransfer} µs CPU per foreign transfer; ours credited ${s.oursCredited}/${s.oursSent}`;
  return { ...row, measured, ...(s.seconds >= 600 ? { met: s.lagBlocks.p99 <= 2 } : {}) };
}

const LIST_LIMIT = fixed("the shared machine's noise: the query is one index range scan, flat with the rows (EXPLAIN below)");

/** The list figures, one row per list and page: p99 at each size and the ratio of the largest to the smallest. */
function listRows(lists: unknown): FigureRow[] {
  if (!lists || typeof lists !== 'object')
    return [{ name: 'list p99, 1M rows against 10k', measured: 'not measured', target: 'ratio ≤ 1.5', limit: LIST_LIMIT }];
  const rows: FigureRow[] = [];
  const walk = (prefix: string, node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const entries = Object.entries(node as Record<string, unknown>);
    if (entries.some(([k]) => k === 'ratio')) {
      const ratio = (node as { ratio: number }).ratio;
      const sizes = entries
        .filter(([k]) => k !== 'ratio')
        .map(([k, v]) => `${k}: ${typeof v === 'number' ? `${v} ms` : JSON.stringify(v)}`);
      rows.push({
        name: `list p99: ${prefix}`,
        measured: `${sizes.join(', ')}; ratio ${ratio}`,
        target: 'ratio ≤ 1.5',
        met: ratio <= 1.5,
        limit: LIST_LIMIT,
      });
      return;
    }
    for (const [k, v] of entries) walk(prefix ? `${prefix} ${k}` : k, v);
  };
  walk('', lists);
  return rows;
}

/** The table: a row per figure any engine measured, a column per engine, the target and what limits it. */
export function figuresTable(run: BenchRun): string {
  const engines = ENGINES.filter((e) => run.engines[e]);
  const byEngine = new Map(engines.map((e) => [e, new Map(figureRows(run.engines[e]!).map((r) => [r.name, r]))]));
  const names = [...new Set(engines.flatMap((e) => [...byEngine.get(e)!.keys()]))];
  const lines = names.map((name) => {
    const rows = engines.map((e) => byEngine.get(e)!.get(name));
    const first = rows.find((r) => r)!;
    const cells = rows.map((r) => (r ? `${r.measured}${verdict(r.met)}` : 'not measured'));
    return `| ${[name, ...cells, first.target, first.limit(run.engines)].join(' | ')} |`;
  });
  const m = run.machine;
  const loads = engines
    .map((e) => `${run.engines[e]!.machine.loadAverage1m} at the ${ENGINE_COLUMN[e].split(' (')[0]!.toLowerCase()}'s start`)
    .join(', ');
  return [
    `Measured ${run.date.slice(0, 16).replace('T', ' ')} UTC on ${m.cpus} × ${m.model}, ${m.memoryGb} GB, Node ${m.node}, the engines one after the other in one run (load average ${loads}).`,
    '',
    `| Figure | ${engines.map((e) => ENGINE_COLUMN[e]).join(' | ')} | Target | Limited by |`,
    `|---|${engines.map(() => '---|').join('')}---|---|`,
    ...lines,
  ].join('\n');
}

/** The last JSON line of a bench run's output. */
function runOf(file: string): BenchRun {
  const line = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  if (!line) throw new Error(`${file} holds no JSON line (run the bench with --json)`);
  return asBenchRun(JSON.parse(line) as BenchRun | BenchFigures);
}

/**
 * Several runs (e.g. `--only lists` apart from the rest) make one run: per engine, a later run's
 * figures replace an earlier one's; the date and the machine are the last run's.
 */
export function mergeRuns(runs: BenchRun[]): BenchRun {
  const engines: Engines = {};
  for (const e of ENGINES) {
    const sets = runs.flatMap((r) => (r.engines[e] ? [r.engines[e]] : []));
    if (sets.length) engines[e] = Object.assign({}, ...sets) as BenchFigures;
  }
  const last = runs.at(-1)!;
  return { date: last.date, machine: last.machine, engines };
}

const engineName = (e: Engine) => ENGINE_COLUMN[e].split(' (')[0]!;

function engineWorkRow(flow: EngineWorkFlow, engine: Engine, w: FlowEngineWork): string {
  const extra = [
    w.failedWorkflowTasks && `${w.failedWorkflowTasks} failed`,
    w.timedOutWorkflowTasks && `${w.timedOutWorkflowTasks} timed out`,
  ];
  const tasks = extra.some(Boolean) ? `${w.workflowTasks} (and ${extra.filter(Boolean).join(', ')})` : w.workflowTasks;
  const types = w.workflowTypes.map((t) => `\`${t}\``).join(' + ');
  return `| ${[ENGINE_WORK_FLOWS[flow], engineName(engine), types, tasks, w.activityTasks, w.localActivities, w.historyEvents].join(' | ')} |`;
}

/**
 * The engine work per flow: a row per flow and engine, from the last of the runs that counted it on
 * that engine, named with its date and load (rarely the run the figures table's header names).
 */
export function engineWorkTable(runs: BenchRun[]): string {
  const measured = ENGINES.flatMap((e) => {
    const f = [...runs].reverse().find((r) => r.engines[e]?.engineWork)?.engines[e];
    return f?.engineWork ? [{ e, f, work: f.engineWork }] : [];
  });
  if (measured.length === 0) return 'Not measured yet (`npm run bench -- --only engine-work --json`).';
  const when = measured.map(
    ({ e, f }) => `${engineName(e).toLowerCase()} ${f.date.slice(0, 16).replace('T', ' ')} UTC (load ${f.machine.loadAverage1m})`,
  );
  const flows = Object.keys(ENGINE_WORK_FLOWS) as EngineWorkFlow[];
  const rows = flows.flatMap((flow) => measured.flatMap(({ e, work }) => (work[flow] ? [engineWorkRow(flow, e, work[flow])] : [])));
  return [
    `One run of each flow, measured on the ${when.join(', on the ')}.`,
    '',
    '| Flow | Engine | Workflows counted | Workflow tasks | Activity tasks | Local activities | History events |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** The page with the text between `start` and `end` replaced by `content`. */
function replaceBlock(page: string, start: string, end: string, content: string): string {
  const a = page.indexOf(start);
  const b = page.indexOf(end);
  if (a < 0 || b < a) throw new Error(`${FIGURES_PAGE} has no ${start} … ${end} block`);
  return `${page.slice(0, a + start.length)}\n${content}\n${page.slice(b)}`;
}

function main(): void {
  const files = process.argv.slice(2);
  if (files.length === 0)
    throw new Error('usage: npm run bench:readme -- <file holding the output of npm run bench -- --json> [more files]');
  const runs = files.map(runOf);
  const table = figuresTable(mergeRuns(runs));
  const figureKeys = (f: BenchFigures) => Object.keys(f).filter((k) => k !== 'date' && k !== 'machine' && k !== 'engine');
  const more =
    runs.length > 1
      ? `\n\nFrom ${runs.length} runs: ${runs
          .map(
            (r) =>
              `${r.date.slice(0, 16).replace('T', ' ')} UTC (${perEngine(r.engines, (f) => `${figureKeys(f).join(', ')}; load ${f.machine.loadAverage1m}`)})`,
          )
          .join('; ')}.`
      : '';
  const page = replaceBlock(readFileSync(FIGURES_PAGE, 'utf8'), START, END, `${table}${more}`);
  writeFileSync(FIGURES_PAGE, replaceBlock(page, ENGINE_WORK_START, ENGINE_WORK_END, engineWorkTable(runs)));
  process.stdout.write(`${FIGURES_PAGE}: figures and engine work tables rewritten\n`);
}

if (process.argv[1]?.endsWith('readme-table.ts')) main();
