import { readdirSync, readFileSync } from 'node:fs';
import type { BenchContext } from './context';

/**
 * CPU seconds so far of each process of each part of the bench's stack, by pid (Linux /proc; a part
 * with no process found is empty). workerAndBench is this process: the worker, the dispatch passes,
 * the load generator and the receiver.
 */
export type StackCpu = Record<'workerAndBench' | 'api' | 'temporal' | 'postgres', ReadonlyMap<number, number>>;

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

interface Proc {
  pid: number;
  ppid: number;
  cpu: number;
  cmdline: string;
}

function processes(): Proc[] {
  const out: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const fields = readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]!.split(' ');
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ');
      out.push({ pid: Number(name), ppid: Number(fields[1]), cpu: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND, cmdline });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * The engine's processes are those whose command line names the bench's data folder (the dev
 * server's database file, the cluster's config); PostgreSQL is the postmaster started on that folder
 * and its backends (children).
 */
export function stackCpu(ctx: BenchContext): StackCpu {
  const dir = ctx.service.dataDir;
  const all = processes();
  const postmasters = all.filter((p) => p.cmdline.includes(dir) && /(^|\/)postgres\s/.test(p.cmdline)).map((p) => p.pid);
  const byPid = (ps: Proc[]) => new Map(ps.map((p) => [p.pid, p.cpu]));
  const usage = process.cpuUsage();
  return {
    workerAndBench: new Map([[process.pid, (usage.user + usage.system) / 1e6]]),
    api: new Map([[0, ctx.apiCpuSeconds()]]),
    temporal: byPid(
      all.filter(
        (p) => p.pid !== process.pid && p.cmdline.includes(dir) && /temporal|server/.test(p.cmdline) && !postmasters.includes(p.pid),
      ),
    ),
    postgres: byPid(all.filter((p) => postmasters.includes(p.pid) || postmasters.includes(p.ppid))),
  };
}

/**
 * A part's CPU seconds between two readings, each process by its own difference: one started between
 * them counts whole, one that ended between them (a pool's backend) adds nothing, never a negative.
 * NaN when the part had no process at the second reading.
 */
export function partSeconds(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number {
  if (after.size === 0) return NaN;
  let seconds = 0;
  for (const [pid, cpu] of after) seconds += cpu - (before.get(pid) ?? 0);
  return seconds;
}

/** Milliseconds of CPU per event of each part between two readings, and the cores the stack kept busy. */
export function cpuPerEvent(before: StackCpu, after: StackCpu, events: number, wallSeconds: number): Record<string, number> {
  const out: Record<string, number> = {};
  let total = 0;
  for (const key of Object.keys(before) as Array<keyof StackCpu>) {
    const seconds = partSeconds(before[key], after[key]);
    out[key] = Math.round((seconds * 1000 * 10) / Math.max(events, 1)) / 10;
    if (Number.isFinite(seconds)) total += seconds;
  }
  out.total = Math.round((total * 1000 * 10) / Math.max(events, 1)) / 10;
  out.coresBusy = Math.round((total / wallSeconds) * 100) / 100;
  return out;
}

/** How often, and how far, the rest between phases looks. */
const REST = {
  everyMs: 5000,
  cores: Number(process.env.BENCH_REST_CORES ?? 0.3),
  seconds: Number(process.env.BENCH_REST_SECONDS ?? 300),
};

/**
 * The rest before a phase: what the phases before it left running (a create phase's first workflow
 * tasks, a webhook backlog still delivering) would land in its figures. Waits until the stack keeps
 * fewer than BENCH_REST_CORES (0.3) cores busy over 5 s, at most BENCH_REST_SECONDS (300); answers
 * how long it waited and the cores busy it ended on, rested or not.
 */
export async function restStack(ctx: BenchContext, phase: string): Promise<{ seconds: number; coresBusy: number }> {
  const started = performance.now();
  let coresBusy = Infinity;
  while (coresBusy >= REST.cores && performance.now() - started < REST.seconds * 1000) {
    const before = stackCpu(ctx);
    await new Promise((r) => setTimeout(r, REST.everyMs));
    coresBusy = cpuPerEvent(before, stackCpu(ctx), 1, REST.everyMs / 1000).coresBusy!;
  }
  const seconds = Math.round((performance.now() - started) / 1000);
  ctx.out(
    `rest before ${phase}: the stack keeps ${coresBusy} cores busy after ${seconds} s${coresBusy < REST.cores ? '' : ' (not rested)'}`,
  );
  return { seconds, coresBusy };
}
