import type { BenchContext } from '../context';
import { closedLoop, latency, openLoop, showLatency } from '../measure';

/**
 * API create at saturation (closed loop), then open-loop at half that rate for the latency a partner
 * sees when the service is not saturated. A 503 (the service refusing load) is counted, not fatal, and
 * is not in the rate: the maximum is what the service accepts.
 */
export async function createPhase(ctx: BenchContext, count: number, concurrency: number): Promise<void> {
  const { out, figures } = ctx;
  let refused = 0;
  const timedCreate = async (): Promise<boolean> => {
    try {
      await ctx.createPayment();
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
  const half = latency(await openLoop(halfCount, rate, timedCreate));
  figures.createAtHalfMaxRate = { ratePerSecond: Math.round(rate * 10) / 10, latency: half };
  out(`API create at ${rate.toFixed(1)}/s (half max), ${halfCount} requests: ${showLatency(half)}   (target p99 <= 50 ms)${refusedNote()}`);
}
