import { readFileSync } from 'node:fs';

/** A thread's time so far: ms on a core, and ms runnable but waiting for one. */
export interface ThreadSchedule {
  ranMs: number;
  waitedMs: number;
}

/** The kernel's schedstat of one thread (`/proc/<pid>/task/<tid>/schedstat`, `/proc/thread-self/schedstat`): ns on a core, ns on a run queue, timeslices. */
export function readSchedule(file: string): ThreadSchedule {
  try {
    const [ran, waited] = readFileSync(file, 'utf8').trim().split(' ').map(Number);
    return { ranMs: ran! / 1e6, waitedMs: waited! / 1e6 };
  } catch {
    return { ranMs: NaN, waitedMs: NaN };
  }
}

/** How a thread spent `seconds`, per second of it (a second waited per second: always runnable, never on a core). */
export function schedulePerSecond(before: ThreadSchedule, after: ThreadSchedule, seconds: number) {
  const rate = (ms: number) => Math.round(ms / seconds);
  return { ranMsPerSecond: rate(after.ranMs - before.ranMs), waitedMsPerSecond: rate(after.waitedMs - before.waitedMs) };
}
