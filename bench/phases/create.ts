import type { BenchContext } from '../context';
import { closedLoop, latency, openLoop, showLatency, type Latency } from '../measure';

/**
 * API create at saturation (closed loop), then open-loop at half that rate for the latency a partner
 * sees when the service is not saturated. A 503 (the service refusing load) is counted, not fatal.
 */
export async function createPhase(ctx: BenchContext, count: number, concurrency: number): Promise<void> {
  const { out, figures } = ctx;
  let refused = 0;
  const steps = new Map<string, number[]>();
  let collecting = false;
  const collect = (timings: Map<string, number>) => {
    if (!collecting) return;
    for (const [name, ms] of timings) steps.set(name, [...(steps.get(name) ?? []), ms]);
  };
  const timedCreate = async (): Promise<boolean> => {
    try {
      await ctx.createPayment(collect);
      return true;
    } catch (err) {
      if ((err as { status?: number }).status !== 503) throw err;
      refused += 1;
      return false;
    }
  };
  const refusedNote = () => {
    const note = refused ? `   (${refused} refused with 503)` : '';
    refused = 0;
    return note;
  };

  const cpuBefore = ctx.apiCpuSeconds();
  figures.apiCreate = await closedLoop(count, concurrency, timedCreate);
  figures.apiCpuMsPerCreate = Math.round(((ctx.apiCpuSeconds() - cpuBefore) * 1000 * 10) / count) / 10;
  out(
    `API create:          ${figures.apiCreate.perSecond}/s   ${showLatency(figures.apiCreate.latency)}   API CPU ${figures.apiCpuMsPerCreate} ms per create${refusedNote()}`,
  );

  const rate = figures.apiCreate.perSecond / 2;
  const halfCount = Math.min(count, Math.max(200, Math.round(rate * 10)));
  collecting = true;
  const half = latency(await openLoop(halfCount, rate, timedCreate));
  // Where a create's time goes, step by step, as the API measured it (Server-Timing).
  const bySteps: Record<string, Latency> = Object.fromEntries([...steps].map(([name, ms]) => [name, latency(ms)]));
  figures.createAtHalfMaxRate = { ratePerSecond: Math.round(rate * 10) / 10, latency: half, steps: bySteps };
  out(`API create at ${rate.toFixed(1)}/s (half max), ${halfCount} requests: ${showLatency(half)}   (target p99 <= 50 ms)${refusedNote()}`);
  for (const [name, l] of Object.entries(bySteps)) out(`  step ${name.padEnd(22)} ${showLatency(l)}`);
}
