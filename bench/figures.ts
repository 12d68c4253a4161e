import os from 'node:os';
import type { FlowEngineWork } from './engine-work';
import type { Prioritised } from './priority';
import type { Latency, Rate } from './measure';

/**
 * Every figure `npm run bench` measures, keyed as in the figures table of docs/performance.md, so
 * that two runs' JSON lines (`--json`) can be compared by a script. A phase that did not run leaves
 * its keys out.
 */
export interface BenchFigures {
  date: string;
  machine: { cpus: number; model: string; memoryGb: number; node: string; loadAverage1m: number };
  /** The Temporal engine measured: the dev server (absent in older runs) or the cluster. */
  engine?: Engine;
  /** Ceilings the API is measured against, in the same run. */
  noopKoaRoute?: Rate;
  postgresSingleRowCommit?: Rate;
  /** The fair baseline: every Payment costs the engine a start and its first workflow task. */
  paymentWorkflowStartWithWorker?: Rate;
  bareWorkflowStartWithoutWorker?: Rate;
  apiCreate?: Rate;
  /** The API process's CPU time per create, at saturation. */
  apiCpuMsPerCreate?: number;
  /** apiCreate / paymentWorkflowStartWithWorker (target >= 0.8). */
  ratio?: number;
  /** `steps` (runs before the traces): each step's latency inside the API from its Server-Timing header. */
  createAtHalfMaxRate?: { ratePerSecond: number; latency: Latency; steps?: Record<string, Latency> };
  /** Where a create's time goes, from the traces of a traced API process at the same rate (bench/phases/create-traces.ts). */
  createTraced?: { ratePerSecond: number; creates: number; sqlStatementsPerCreate: number; parts: Record<string, Latency> };
  confirmedTransferToSucceeded?: Latency;
  /** `latency` of the events delivered; `undelivered` of the `events` committed were not within the phase's straggler wait. */
  committedEventToWebhookDelivered?: WebhookRunFigures;
  /** The same path sustained (50/s for 5 min by default), with the backlog over time. */
  webhooksSustained?: WebhookRunFigures;
  /** Lists stay flat: 1M rows against 10k (bench/phases/lists.ts). */
  listP99?: ListsP99;
  /** The chain scanner under mainnet-shaped traffic (bench/phases/scanner.ts). */
  scannerUnderTraffic?: ScannerTrafficFigures;
  /** refused: the 503 and 429 answers' times; accepted: the 201s' (absent in results from before they were kept apart). */
  overload?: {
    ratePerSecond: number;
    seconds: number;
    count: number;
    answers: Record<string, number>;
    latency: Latency;
    refused?: Latency;
    accepted?: Latency;
    /** The API's event-loop thread over the phase, per second of it: ms on a core, ms runnable but waiting for one. */
    apiLoop?: { ranMsPerSecond: number; waitedMsPerSecond: number };
    /** The same for the main thread of the process that sent the load and timed the answers. */
    loadProcess?: { ranMsPerSecond: number; waitedMsPerSecond: number };
    /** The nice values the API process and the load's process ran the phase at (absent before they were set). */
    priority?: { api: Prioritised; load: Prioritised };
    passed: boolean;
  };
  apiPeakRssMb?: number;
  /** Before each phase, how long the stack rested and the cores it kept busy when the phase began (bench/stack-cpu.ts). */
  restBefore?: Record<string, { seconds: number; coresBusy: number }>;
  /** What one run of each flow cost the engine, read from its workflows' histories (bench/phases/engine-work.ts). */
  engineWork?: Partial<Record<EngineWorkFlow, FlowEngineWork>>;
}

/** The flows whose engine work the bench counts, in the order it runs them, and how the docs name them. */
export const ENGINE_WORK_FLOWS = {
  receivePaymentSucceeded: 'receive Payment that succeeds',
  depositSettled: 'deposit that settles',
  webhookDeliveredFirstAttempt: 'webhook delivery, first attempt 2xx',
  refund: 'refund of a succeeded Payment',
  vaultFunding: 'vault funding of a Payment, with the Payment',
} as const;
export type EngineWorkFlow = keyof typeof ENGINE_WORK_FLOWS;

/**
 * One webhook run: committed event -> delivered. Older runs have only the first five keys.
 * `stages` splits each delivery from its rows; `backlog` samples this run's events committed and not
 * yet delivered; `load` is the 1-minute load average at the start, every sample and the end (the
 * cores are shared with other work).
 */
export interface WebhookRunFigures {
  ratePerSecond: number;
  seconds: number;
  latency: Latency;
  events?: number;
  undelivered?: number;
  /** Events sent (untimed) before the run, to warm the delivery path up. */
  warmupEvents?: number;
  stages?: Record<string, Latency>;
  /**
   * CPU ms per event of each part of the stack (bench/stack-cpu.ts: the worker's process with the
   * bench, the API, the engine, PostgreSQL), their total, and `coresBusy`: the cores the stack kept busy.
   */
  cpuMsPerEvent?: Record<string, number>;
  /** The cores the stack keeps busy with no events (10 s before the run). */
  idleCoresBusy?: number;
  /** The p99 (ms) of the events committed in each 10 s of the run. */
  p99Per10s?: number[];
  backlog?: { everySeconds: number; samples: Array<{ atS: number; pending: number }>; firstThirdMean: number; lastThirdMean: number };
  load?: { start: number; end: number; samples: number[] };
  refused?: Record<string, number>;
}

/** No backlog growth: the last third's mean backlog is at most one second of events above the first third's. */
export function backlogFlat(b: { firstThirdMean: number; lastThirdMean: number }, ratePerSecond: number): boolean {
  return b.lastThirdMean <= b.firstThirdMean + ratePerSecond;
}

/**
 * The p99 (ms) of one page read at each seeded size, keyed by the size ('10k', '1M'; BENCH_LIST_ROWS
 * sets the large one), and the large size's p99 over the small one's (target <= 1.5).
 */
export type ListPageP99 = Record<string, number> & { ratio: number };

/** One list: its first page and a deep page (a cursor half-way down), unfiltered and per filter ('status=settled', 'limit=100'). */
export interface ListP99 {
  first: ListPageP99;
  deep: ListPageP99;
  filtered: Record<string, { first: ListPageP99; deep: ListPageP99 }>;
}

export interface ListFigures {
  payments: ListP99;
  deposits: ListP99;
  transactions: ListP99;
}

export interface ListsP99 extends ListFigures {
  /** Reads per page and size. */
  reads: number;
  /** Seconds the seeding of each size took (the large size's only adds the rows the small one lacks). */
  seedSeconds: Record<string, number>;
}

/** The Temporal engines the bench runs on: the dev server (SQLite) and the four-role cluster over PostgreSQL. */
export const ENGINES = ['dev', 'cluster'] as const;
export type Engine = (typeof ENGINES)[number];

/** One `npm run bench -- --json` line: each engine's figures, measured one after the other in one run. */
export interface BenchRun {
  date: string;
  machine: BenchFigures['machine'];
  engines: Partial<Record<Engine, BenchFigures>>;
}

function machine(): BenchFigures['machine'] {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    model: cpus[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    loadAverage1m: Math.round(os.loadavg()[0]! * 100) / 100,
  };
}

export function newFigures(engine: Engine = 'dev'): BenchFigures {
  return { date: new Date().toISOString(), engine, machine: machine() };
}

export function newBenchRun(): BenchRun {
  return { date: new Date().toISOString(), machine: machine(), engines: {} };
}

/** A JSON line of any bench run: a BenchRun, or one engine's figures as runs before the engines printed. */
export function asBenchRun(parsed: BenchRun | BenchFigures): BenchRun {
  if ('engines' in parsed) return parsed;
  return { date: parsed.date, machine: parsed.machine, engines: { [parsed.engine ?? 'dev']: parsed } };
}

/** The chain scanner under mainnet-shaped traffic (bench/phases/scanner.ts measures it). */
export interface ScannerTrafficFigures {
  blockMs: number;
  transfersPerBlock: number;
  oursPerBlock: number;
  seconds: number;
  blocks: number;
  /** Per block: how many blocks were mined after it by the time the scanner had read it. */
  lagBlocks: { p50: number; p99: number; max: number };
  /** Per block: from its mining to the scanner's cursor passing it (polled every 25 ms). */
  lag: Latency;
  /** The scan's own CPU per foreign transfer in a block (rescanCpu). */
  scanCpuUsPerTransfer: number;
  oursSent: number;
  oursCredited: number;
}
