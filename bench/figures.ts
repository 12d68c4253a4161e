import os from 'node:os';
import type { Latency, Rate } from './measure';

/**
 * Every figure `npm run bench` measures, keyed as in the README's figures table (and issue 11), so
 * that two runs' JSON lines (`--json`) can be compared by a script. A phase that did not run leaves
 * its keys out.
 */
export interface BenchFigures {
  date: string;
  machine: { cpus: number; model: string; memoryGb: number; node: string; loadAverage1m: number };
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
  createAtHalfMaxRate?: { ratePerSecond: number; latency: Latency };
  confirmedTransferToSucceeded?: Latency;
  committedEventToWebhookDelivered?: { ratePerSecond: number; seconds: number; latency: Latency };
  listP99?: Record<string, unknown>;
  overload?: { ratePerSecond: number; seconds: number; count: number; answers: Record<string, number>; latency: Latency; passed: boolean };
  apiPeakRssMb?: number;
}

export function newFigures(): BenchFigures {
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    machine: {
      cpus: cpus.length,
      model: cpus[0]?.model.trim() ?? 'unknown',
      memoryGb: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      loadAverage1m: Math.round(os.loadavg()[0]! * 100) / 100,
    },
  };
}
