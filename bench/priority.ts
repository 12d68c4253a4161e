import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';

/**
 * Scheduling priority for the overload phase. On Linux a nice value belongs to a thread, not a
 * process, so a process is reprioritised thread by thread (threads it starts later inherit from the
 * thread that starts them). Raising a priority (a negative nice) needs root or CAP_SYS_NICE: without
 * it nothing changes and the answer says why.
 */
export type Prioritised = { nice: number } | { nice: 0; refused: string };

/**
 * Every thread of process `pid` at `nice`, and its session's autogroup too: with autogroups on, the
 * kernel first shares the cores between sessions, and a thread's nice only ranks it within its own.
 * So `pid` should lead a session of its own, as a process in a container of its own does.
 */
export function prioritiseProcess(pid: number, nice: number): Prioritised {
  if (nice === 0) return { nice: 0 };
  const threads = prioritise(readdirSync(`/proc/${pid}/task`).map(Number), nice);
  return 'refused' in threads ? threads : prioritiseAutogroup(pid, nice);
}

function prioritiseAutogroup(pid: number, nice: number): Prioritised {
  const file = `/proc/${pid}/autogroup`;
  if (!existsSync(file)) return { nice };
  try {
    writeFileSync(file, String(nice));
    return { nice };
  } catch (err) {
    return { nice: 0, refused: `autogroup: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
  }
}

function prioritise(threads: number[], nice: number): Prioritised {
  for (const tid of threads) {
    try {
      os.setPriority(tid, nice);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      // A thread that ended since the listing needs no priority.
      if (code !== 'ESRCH') return { nice: 0, refused: code };
    }
  }
  return { nice };
}
