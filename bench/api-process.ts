import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { killWithParent } from '../src/embedded/process';
import { sleep } from './measure';
import { readSchedule, type ThreadSchedule } from './schedstat';

export interface ApiProcess {
  url: string;
  pid: number;
  /** The process's peak resident set (VmHWM) so far, in MB. */
  peakRssMb(): number;
  /** CPU seconds (user + system) the process has used so far. */
  cpuSeconds(): number;
  /** Its main thread (the event loop) so far: ms on a core, and ms runnable but waiting for one. */
  loopSchedule(): ThreadSchedule;
  stop(): Promise<void>;
}

/**
 * The API under test runs as its own process (`src/main.ts --only api`, the production shape) against
 * the bench's PostgreSQL and Temporal: its event loop and memory are its own, not shared with the
 * worker or the load generator.
 */
export async function startApiProcess(opts: {
  databaseUrl: string;
  temporalAddress: string;
  port: number;
  env?: Record<string, string>;
}): Promise<ApiProcess> {
  // e.g. BENCH_API_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the API alone, or
  // BENCH_API_NODE_ARGS=--trace-gc with BENCH_API_STDOUT=1 (its stdout into the bench's) to see its collections.
  const nodeArgs = (process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/main.ts', '--only', 'api'], {
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      DEPLOYMENT: 'sandbox',
      DATABASE_URL: opts.databaseUrl,
      TEMPORAL_ADDRESS: opts.temporalAddress,
      PORT: String(opts.port),
      ...opts.env,
    },
    stdio: ['ignore', process.env.BENCH_API_STDOUT ? 'inherit' : 'ignore', 'inherit'],
    // A session of its own, as a container of its own would be: where the kernel shares the cores
    // between sessions (autogroups) first, its priority is then its own (bench/priority.ts).
    detached: true,
  });
  killWithParent(child);
  const url = `http://127.0.0.1:${opts.port}`;
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  for (let i = 0; ; i += 1) {
    if (exited) throw new Error('the API process exited during start-up');
    const up = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (i > 600) throw new Error('the API process did not answer /healthz within 60 s');
    await sleep(100);
  }
  const pid = child.pid!;
  let lastPeak = 0;
  const peakRssMb = () => {
    try {
      const kb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
      lastPeak = Math.max(lastPeak, Math.round(kb / 1024));
    } catch {
      // gone: the last reading stands
    }
    return lastPeak;
  };
  const ticksPerSecond = 100; // USER_HZ on Linux
  const cpuSeconds = () => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
    } catch {
      return NaN;
    }
  };
  const loopSchedule = (): ThreadSchedule => readSchedule(`/proc/${pid}/task/${pid}/schedstat`);
  return {
    url,
    pid,
    peakRssMb,
    cpuSeconds,
    loopSchedule,
    stop: async () => {
      peakRssMb();
      if (exited) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    },
  };
}
