import { readFileSync, writeFileSync } from 'node:fs';
import type { BenchFigures } from './figures';
import type { Latency, Rate } from './measure';

/**
 * `npm run bench:readme -- <bench output>`: rewrites the README's figures table (between its
 * bench-figures markers) from the last JSON line of a `npm run bench -- --json` run, with the date
 * and the machine. The table is never edited by hand.
 */
const START = '<!-- bench-figures:start -->';
const END = '<!-- bench-figures:end -->';

const lat = (l?: Latency) => (l ? `p50 ${l.p50Ms} ms, p99 ${l.p99Ms} ms` : 'not measured');
const rate = (r?: Rate) => (r ? `${r.perSecond}/s (${lat(r.latency)})` : 'not measured');
const verdict = (ok: boolean | undefined) => (ok === undefined ? '' : ok ? ' — met' : ' — **missed**');

export function figuresTable(f: BenchFigures): string {
  const rows: [string, string, string][] = [
    ['no-op Koa route (ceiling)', rate(f.noopKoaRoute), ''],
    ['PostgreSQL single-row commit (ceiling)', rate(f.postgresSingleRowCommit), ''],
    ['PaymentWorkflow start with the worker running (the fair baseline)', rate(f.paymentWorkflowStartWithWorker), ''],
    ['bare `workflow.start` without a worker', rate(f.bareWorkflowStartWithoutWorker), ''],
    ['API create (closed loop)', `${rate(f.apiCreate)}; API CPU ${f.apiCpuMsPerCreate ?? '?'} ms per create`, ''],
    ['ratio API create / fair baseline', f.ratio === undefined ? 'not measured' : String(f.ratio), `≥ 0.8${verdict(f.ratio === undefined ? undefined : f.ratio >= 0.8)}`],
    [
      "create latency at half the API's max rate",
      f.createAtHalfMaxRate ? `${f.createAtHalfMaxRate.ratePerSecond}/s: ${lat(f.createAtHalfMaxRate.latency)}` : 'not measured',
      `p99 ≤ 50 ms${verdict(f.createAtHalfMaxRate ? f.createAtHalfMaxRate.latency.p99Ms <= 50 : undefined)}`,
    ],
    [
      'confirmed transfer → `succeeded` (a block every 100 ms)',
      lat(f.confirmedTransferToSucceeded),
      `p99 ≤ 1 s${verdict(f.confirmedTransferToSucceeded ? f.confirmedTransferToSucceeded.p99Ms <= 1000 : undefined)}`,
    ],
    [
      'committed event → webhook delivered',
      f.committedEventToWebhookDelivered
        ? `${f.committedEventToWebhookDelivered.ratePerSecond}/s for ${f.committedEventToWebhookDelivered.seconds} s: ${lat(f.committedEventToWebhookDelivered.latency)}`
        : 'not measured',
      `p99 ≤ 500 ms at 20/s for 60 s${verdict(f.committedEventToWebhookDelivered ? f.committedEventToWebhookDelivered.latency.p99Ms <= 500 : undefined)}`,
    ],
    ...listRows(f.listP99),
    scannerRow(f.scannerUnderTraffic),
    ['API process peak RSS', f.apiPeakRssMb === undefined ? 'not measured' : `${f.apiPeakRssMb} MB`, ''],
    [
      'overload (creates at twice the max rate)',
      f.overload ? `${f.overload.ratePerSecond}/s for ${f.overload.seconds} s: ${Object.entries(f.overload.answers).map(([k, v]) => `${k} ×${v}`).join(', ')}; ${lat(f.overload.latency)}` : 'not measured',
      f.overload ? (f.overload.passed ? 'no 500, none hung — met' : '**failed**') : '',
    ],
  ];
  const m = f.machine;
  return [
    `Measured ${f.date.slice(0, 16).replace('T', ' ')} UTC on ${m.cpus} × ${m.model}, ${m.memoryGb} GB, Node ${m.node} (load average ${m.loadAverage1m} at the start).`,
    '',
    '| Figure | Measured | Target |',
    '|---|---|---|',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/** The chain scanner under mainnet-shaped blocks: its lag (blocks and ms) and the CPU per foreign transfer. */
function scannerRow(s: BenchFigures['scannerUnderTraffic']): [string, string, string] {
  const name = 'chain scanner lag under mainnet-shaped traffic';
  if (!s) return [name, 'not measured', 'p99 ≤ 2 blocks for 10 min'];
  const measured =
    `${s.transfersPerBlock} transfers per ${s.blockMs / 1000} s block (${s.oursPerBlock} ours) for ${s.seconds} s: ` +
    `p50 ${s.lagBlocks.p50}, p99 ${s.lagBlocks.p99}, max ${s.lagBlocks.max} blocks (${lat(s.lag)}); ` +
    `${s.scanCpuUsPerTransfer} µs CPU per foreign transfer; ours credited ${s.oursCredited}/${s.oursSent}`;
  return [name, measured, `p99 ≤ 2 blocks for 10 min${verdict(s.seconds >= 600 ? s.lagBlocks.p99 <= 2 : undefined)}`];
}

/** The list figures, one row per list and page: p99 at each size and the ratio of the largest to the smallest. */
function listRows(lists: unknown): [string, string, string][] {
  if (!lists || typeof lists !== 'object') return [['list p99, 1M rows against 10k', 'not measured', 'ratio ≤ 1.5']];
  const rows: [string, string, string][] = [];
  const walk = (prefix: string, node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const entries = Object.entries(node as Record<string, unknown>);
    if (entries.some(([k]) => k === 'ratio')) {
      const ratio = (node as { ratio: number }).ratio;
      const sizes = entries.filter(([k]) => k !== 'ratio').map(([k, v]) => `${k}: ${typeof v === 'number' ? `${v} ms` : JSON.stringify(v)}`);
      rows.push([`list p99: ${prefix}`, `${sizes.join(', ')}; ratio ${ratio}`, `ratio ≤ 1.5${verdict(ratio <= 1.5)}`]);
      return;
    }
    for (const [k, v] of entries) walk(prefix ? `${prefix} ${k}` : k, v);
  };
  walk('', lists);
  return rows;
}

/** The last JSON line of a bench run's output. */
function figuresOf(file: string): BenchFigures {
  const line = readFileSync(file, 'utf8').trim().split('\n').reverse().find((l) => l.startsWith('{'));
  if (!line) throw new Error(`${file} holds no JSON line (run the bench with --json)`);
  return JSON.parse(line) as BenchFigures;
}

/**
 * Several runs (e.g. `--only lists` apart from the rest) make one table: a later run's figures
 * replace an earlier one's, and the table names every run's date.
 */
function main(): void {
  const files = process.argv.slice(2);
  if (files.length === 0) throw new Error('usage: npm run bench:readme -- <file holding the output of npm run bench -- --json> [more files]');
  const runs = files.map(figuresOf);
  const merged = Object.assign({}, ...runs) as BenchFigures;
  const table = figuresTable(merged);
  const more = runs.length > 1 ? `\n\nFrom ${runs.length} runs: ${runs.map((r) => `${r.date.slice(0, 16).replace('T', ' ')} UTC (${Object.keys(r).filter((k) => k !== 'date' && k !== 'machine' && k !== 'engine').join(', ')}; load ${r.machine.loadAverage1m})`).join('; ')}.` : '';
  const readme = readFileSync('README.md', 'utf8');
  const a = readme.indexOf(START);
  const b = readme.indexOf(END);
  if (a < 0 || b < a) throw new Error(`README.md has no ${START} … ${END} block`);
  writeFileSync('README.md', `${readme.slice(0, a + START.length)}\n${table}${more}\n${readme.slice(b)}`);
  process.stdout.write('README.md: figures table rewritten\n');
}

if (process.argv[1]?.endsWith('readme-table.ts')) main();
