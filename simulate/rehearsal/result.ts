import type { Outage } from './verdicts';

/**
 * The rehearsal's result: one JSON line, bare (nothing before it on its line), the last line a run
 * prints; `npm run rehearsal:readme` regenerates the full run's table in docs/testing.md from it.
 */

export interface RehearsalResult {
  ok: boolean;
  deployment: 'production';
  /** The commit the run was made on (`git rev-parse --short HEAD`). */
  commit: string;
  date: string;
  seconds: number;
  loadSeconds: number;
  loops: number;
  flowsPerSecond: number;
  /** Faults planted in the observations (`--plant`): a run with any must fail. */
  plants: string[];
  flows: Record<string, number>;
  bounds: { backMs: number; paymentMs: number };
  /** Each fault by the part it killed. */
  outages: Array<{ part: string; what: string; backAfterMs: number | null; paymentAfterMs: number | null; error?: string }>;
  failovers: number;
  unavailable503: number;
  unplannedHolds: string[];
  /** The holds a scenario planned (the treasury drill), each released by the operator through the CLI. */
  releasedHolds: string[];
  events: { committed: number; delivered: number; duplicates: number; failedOnPurpose: number };
  payouts: { service: number; provider: number };
  ledger: { postings: number; problems: number };
  reconcile: { checked: number; differences: number };
  [figure: string]: unknown;
  failures: string[];
}

export function outagesOf(outages: Outage[]): RehearsalResult['outages'] {
  return outages.map((o) => ({
    part: o.part,
    what: o.what,
    backAfterMs: o.backAt === undefined ? null : o.backAt - o.at,
    paymentAfterMs: o.paymentAt === undefined ? null : o.paymentAt - o.at,
    ...(o.error ? { error: o.error } : {}),
  }));
}

/** The last line of the output that parses as a rehearsal's result. */
export function resultOf(output: string): RehearsalResult {
  for (const line of output.trim().split('\n').reverse()) {
    if (!line.startsWith('{')) continue;
    const parsed = JSON.parse(line) as RehearsalResult;
    if (parsed.deployment) return parsed;
  }
  throw new Error('no rehearsal result line (a bare JSON object naming its deployment) in the output');
}

const secs = (ms: number | null) => (ms === null ? 'never' : `${(ms / 1000).toFixed(1)} s`);
const count = (figures: unknown) =>
  Object.entries((figures ?? {}) as Record<string, number>)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ') || 'none';

/** The Markdown table of one run: what it was, each fault's two times, and what the checks found. */
export function resultTable(r: RehearsalResult): string {
  const rows: Array<[string, string]> = [
    ['Run', `${r.date}, commit ${r.commit}, \`DEPLOYMENT=${r.deployment}\`, ${r.loadSeconds} s of load in ${r.seconds} s`],
    ['Verdict', r.ok ? 'passed' : `**failed** (${r.failures.length}): ${r.failures.slice(0, 3).join('; ')}`],
    ['Flows', count(r.flows)],
    ...r.outages.map((o): [string, string] => [
      `Fault: ${o.part}`,
      `back after ${secs(o.backAfterMs)}, a Payment succeeded after ${secs(o.paymentAfterMs)}${o.error ? ` — ${o.error}` : ''}`,
    ]),
    ['Bounds', `back within ${r.bounds.backMs / 1000} s, a Payment within ${r.bounds.paymentMs / 1000} s`],
    ['Payments', count(r.payments)],
    ['Planned', count(r.planned)],
    ['Deposits', `${count(r.deposits)} (each transfer one deposit, its net to the unit on chain)`],
    ['Planned holds', `${(r.releasedHolds ?? []).length}, each released by the operator through the CLI`],
    ['Unplanned holds', r.unplannedHolds.length === 0 ? 'none' : r.unplannedHolds.join('; ')],
    [
      'Events',
      `${r.events.delivered} of ${r.events.committed} delivered and verified, ${r.events.duplicates} duplicates, ${r.events.failedOnPurpose} refused by the failing receiver`,
    ],
    ['Bank payouts', `${r.payouts.service} by the service, ${r.payouts.provider} in the provider's records`],
    [
      'Books',
      `ledger check ${r.ledger.problems} problems over ${r.ledger.postings} postings; reconcile ${r.reconcile.differences} differences over ${r.reconcile.checked} addresses`,
    ],
    ['503s', `${r.unavailable503}, ${r.failovers} failovers to the other API`],
  ];
  return ['| | |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${v.replace(/\|/g, '\\|')} |`)].join('\n');
}

export const TABLE_START = '<!-- rehearsal-result:start -->';
export const TABLE_END = '<!-- rehearsal-result:end -->';

/** The page with the table between its markers replaced. */
export function withTable(page: string, table: string): string {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`the page has no ${TABLE_START} … ${TABLE_END} markers`);
  return `${page.slice(0, start + TABLE_START.length)}\n${table}\n${page.slice(end)}`;
}
