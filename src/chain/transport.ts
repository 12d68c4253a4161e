import { fallback, http, type Transport } from 'viem';

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
 * Several URLs fail over in order (viem's fallback): a call that fails on one (down, timed out, an
 * error that is not the call's own, such as a revert) goes to the next, each with the same timeout.
 */
export function rpcTransport(rpcUrls: string | string[], timeoutMs: number = RPC_TIMEOUT_MS, opts: { batched?: boolean } = {}): Transport {
  const urls = typeof rpcUrls === 'string' ? [rpcUrls] : rpcUrls;
  const one = (url: string) => http(url, { timeout: timeoutMs, ...(opts.batched ? { batch: { batchSize: RPC_BATCH_SIZE } } : {}) });
  if (urls.length === 0) throw new Error('an RPC transport needs at least one URL');
  return urls.length === 1 ? one(urls[0]!) : fallback(urls.map(one));
}
