import { readdirSync, readFileSync } from 'node:fs';
import type { BenchContext } from './context';

/** CPU seconds so far of each part of the bench's stack (Linux /proc; NaN where a part is not found). */
export interface StackCpu {
  /** This process: the worker, the dispatch passes, the load generator and the receiver. */
  workerAndBench: number;
  api: number;
  temporal: number;
  postgres: number;
}

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
 * and its backends (children). Backends that ended during a run are not counted: the pools keep theirs.
 */
export function stackCpu(ctx: BenchContext): StackCpu {
  const dir = ctx.service.dataDir;
  const all = processes();
  const postmasters = all.filter((p) => p.cmdline.includes(dir) && /(^|\/)postgres\s/.test(p.cmdline)).map((p) => p.pid);
  const sum = (ps: Proc[]) => (ps.length === 0 ? NaN : ps.reduce((a, p) => a + p.cpu, 0));
  const usage = process.cpuUsage();
  return {
    workerAndBench: (usage.user + usage.system) / 1e6,
    api: ctx.apiCpuSeconds(),
    temporal: sum(
      all.filter(
        (p) => p.pid !== process.pid && p.cmdline.includes(dir) && /temporal|server/.test(p.cmdline) && !postmasters.includes(p.pid),
      ),
    ),
    postgres: sum(all.filter((p) => postmasters.includes(p.pid) || postmasters.includes(p.ppid))),
  };
}

/** Milliseconds of CPU per event of each part between two readings, and the cores the stack kept busy. */
export function cpuPerEvent(before: StackCpu, after: StackCpu, events: number, wallSeconds: number): Record<string, number> {
  const out: Record<string, number> = {};
  let total = 0;
  for (const key of Object.keys(before) as Array<keyof StackCpu>) {
    const seconds = after[key] - before[key];
    out[key] = Math.round((seconds * 1000 * 10) / Math.max(events, 1)) / 10;
    if (Number.isFinite(seconds)) total += seconds;
  }
  out.total = Math.round((total * 1000 * 10) / Math.max(events, 1)) / 10;
  out.coresBusy = Math.round((total / wallSeconds) * 100) / 100;
  return out;
}
