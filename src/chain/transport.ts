import { http, type HttpTransport } from 'viem';

/**
 * Every JSON-RPC request to a chain ends within this; viem then retries it (3 times, backing off from
 * 150 ms), so one call is bounded at about a minute. A slow node fails an activity attempt (which
 * Temporal retries) or an API request (503), instead of holding it.
 */
export const RPC_TIMEOUT_MS = 15_000;

/** Calls sent in one JSON-RPC batch at most (the common provider limit is 100 or more). */
export const RPC_BATCH_SIZE = 100;

/**
 * The one way the service builds a viem transport to a chain: always with a timeout. `batched` sends
 * the calls made in one tick as JSON-RPC batches (reconciliation reads hundreds of balances at once).
 */
export function rpcTransport(rpcUrl: string, timeoutMs: number = RPC_TIMEOUT_MS, opts: { batched?: boolean } = {}): HttpTransport {
  return http(rpcUrl, { timeout: timeoutMs, ...(opts.batched ? { batch: { batchSize: RPC_BATCH_SIZE } } : {}) });
}
