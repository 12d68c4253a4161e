import type { BenchContext } from '../context';
import { openLoopInProcess } from '../load-process';
import { latency, showLatency } from '../measure';
import { schedulePerSecond } from '../schedstat';
import type { Prioritised } from '../priority';

/** A request still unanswered after this counts as hung (the client gives up on it). */
const HANG_MS = 30_000;

/**
 * Open-loop creates at twice the measured maximum rate for `seconds`, sent from a process of their own;
 * every request gets HANG_MS to answer. The API process and the load's process run at `nice` (the
 * shape of a host where the API has cores of its own and the partners are elsewhere: on 2 shared
 * cores a refusal otherwise waits for the engine's threads to yield one). The phase is each engine's
 * last, so nothing after it runs at that priority. Counts each answer by status and error code. The one check of the bench (in the output and
 * the exit code): no request hung or answered 500, and every 503 carried Retry-After.
 */
export async function overloadPhase(ctx: BenchContext, seconds: number, nice: number): Promise<boolean> {
  const { out, figures } = ctx;
  const rate = 2 * (figures.apiCreate?.perSecond ?? 0);
  if (!(rate > 0) || seconds <= 0) return true;
  const count = Math.max(1, Math.round(rate * seconds));
  const answers: Record<string, number> = {};
  const note = (key: string) => void (answers[key] = (answers[key] ?? 0) + 1);
  // Each answer's time by what it was: a refusal must come at once, an accepted create near its unloaded time.
  const refusedMs: number[] = [];
  const acceptedMs: number[] = [];
  const apiPriority = ctx.prioritiseApi(nice);
  const loopBefore = ctx.apiLoopSchedule();
  const startedAt = performance.now();
  const {
    answers: results,
    priority: loadPriority,
    schedule: loadSchedule,
  } = await openLoopInProcess({
    url: `${ctx.apiUrl}/v2/payments`,
    headers: { authorization: ctx.authorization, 'content-type': 'application/json' },
    body: JSON.stringify(ctx.createBody),
    count,
    ratePerSecond: rate,
    hangMs: HANG_MS,
    nice,
  });
  const elapsed = (performance.now() - startedAt) / 1000;
  const apiLoop = schedulePerSecond(loopBefore, ctx.apiLoopSchedule(), elapsed);
  const loadProcess = schedulePerSecond(loadSchedule.before, loadSchedule.after, elapsed);
  for (const { outcome, code, retryAfter, ms } of results) {
    if (outcome === 503 || outcome === 429) refusedMs.push(ms);
    else if (outcome === 201) acceptedMs.push(ms);
    note(code ? `${outcome} ${code}` : String(outcome));
    if (outcome === 503 && !(Number(retryAfter) >= 1)) note('503 without Retry-After');
  }
  const samples = results.map((r) => r.ms);
  const bad = Object.entries(answers).filter(
    ([k]) => k === 'hung' || k === 'connection failed' || k.startsWith('500') || k === '503 without Retry-After',
  );
  const passed = bad.length === 0;
  const lat = latency(samples);
  const refused = latency(refusedMs);
  const accepted = latency(acceptedMs);
  figures.overload = {
    ratePerSecond: Math.round(rate * 10) / 10,
    seconds,
    count,
    answers,
    latency: lat,
    refused,
    accepted,
    apiLoop,
    loadProcess,
    priority: { api: apiPriority, load: loadPriority },
    passed,
  };
  const share = (prefix: string) => {
    const n = Object.entries(answers)
      .filter(([k]) => k.startsWith(prefix))
      .reduce((sum, [, v]) => sum + v, 0);
    return `${((100 * n) / count).toFixed(1)}%`;
  };
  out(
    `overload at ${rate.toFixed(1)}/s (2x max) for ${seconds} s, ${count} creates: 429 ${share('429')}, 503 ${share('503')}   ${showLatency(lat)}   max ${lat.maxMs} ms`,
  );
  out(`  refusals ${showLatency(refused)} (${refused.count});  accepted creates ${showLatency(accepted)} (${accepted.count})`);
  out(`  priority (nice): the API ${showPriority(apiPriority)}, the load ${showPriority(loadPriority)}`);
  out(
    `  per second, the API's event loop: ${apiLoop.ranMsPerSecond} ms on a core, ${apiLoop.waitedMsPerSecond} ms runnable and waiting for one;` +
      ` the load's: ${loadProcess.ranMsPerSecond} ms, ${loadProcess.waitedMsPerSecond} ms`,
  );
  out(
    `  answers: ${Object.entries(answers)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ')}`,
  );
  out(
    passed
      ? `overload check: PASS (every request answered within ${HANG_MS / 1000} s, none 500, every 503 with Retry-After)`
      : `overload check: FAIL (${bad.map(([k, v]) => `${k}: ${v}`).join(', ')})`,
  );
  return passed;
}

function showPriority(p: Prioritised): string {
  return 'refused' in p ? `0 (${p.refused})` : String(p.nice);
}
