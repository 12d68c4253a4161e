import type { Address } from 'viem';
import type { RunningService } from '../src/runtime/service';
import type { ApiProcess } from './api-process';
import type { Prioritised } from './priority';
import type { BenchFigures } from './figures';
import type { ThreadSchedule } from './schedstat';

/** What every bench phase gets: the running stack, a partner credential, and where to report. */
export interface BenchContext {
  service: RunningService;
  /** The API under test (its own process, see bench/api-process.ts). */
  apiUrl: string;
  appId: string;
  authorization: string;
  accountId: string;
  network: { chainId: number; confirmations: number };
  tokenAddress: Address;
  /** A receive Payment's create body for `accountId`. */
  createBody: Record<string, unknown>;
  /** Calls the API as the bench app (`headers` replace its own); throws (with `status`) on a status of 300 or more. */
  api(
    path: string,
    init?: {
      method?: string;
      body?: unknown;
      key?: string;
      headers?: Record<string, string>;
    },
  ): Promise<any>;
  /** POST /v2/payments with a fresh Idempotency-Key. */
  createPayment(): Promise<any>;
  /** CPU seconds the API process has used so far. */
  apiCpuSeconds(): number;
  /** The API process's event-loop thread so far: ms run, ms waited for a core. */
  apiLoopSchedule(): ThreadSchedule;
  /** Every thread of the API process at this nice value (bench/priority.ts). */
  prioritiseApi(nice: number): Prioritised;
  /** Another API process like the one under test, on a port of its own, with `env` added (e.g. tracing on). */
  startApi(env?: Record<string, string>): Promise<ApiProcess>;
  figures: BenchFigures;
  out(line: string): void;
}

export type BenchPhase = (ctx: BenchContext) => Promise<void>;
