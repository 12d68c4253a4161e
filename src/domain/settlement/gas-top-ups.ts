import type { Address, Hash } from 'viem';

/** Top-ups sent under one treasury lease at most: their broadcasts stay well inside the lease. */
export const MAX_TOP_UPS_PER_BATCH = 50;

/** Sends a top-up to each address, in order; answers each one's transaction, or why it was not sent. */
export type SendTopUps = (addresses: Address[]) => Promise<Array<Hash | Error>>;

export interface TopUpBatcher {
  /** The transaction that tops this address up: sent with the next batch. */
  request(address: Address): Promise<Hash>;
}

interface Waiter {
  address: Address;
  resolve(hash: Hash): void;
  reject(err: Error): void;
}

/**
 * Gas top-ups asked for in one process while a batch is on its way wait for the next batch, and one
 * treasury lease sends them all. One lease per top-up made the treasury every settlement's queue under
 * load: waits for it ran past 90 s and spent settlement attempts until Payments were held. An address
 * asked for again while its top-up is queued or on its way is answered by that same transaction.
 */
export function topUpBatcher(send: SendTopUps): TopUpBatcher {
  let queue: Waiter[] = [];
  let sending: { keys: Set<string>; waiters: Waiter[] } | null = null;
  const keyOf = (address: Address) => address.toLowerCase();

  const nextBatch = (): { addresses: Address[]; keys: Set<string>; waiters: Waiter[] } => {
    const byKey = new Map<string, Address>();
    for (const w of queue) {
      if (byKey.size === MAX_TOP_UPS_PER_BATCH) break;
      if (!byKey.has(keyOf(w.address))) byKey.set(keyOf(w.address), w.address);
    }
    const keys = new Set(byKey.keys());
    const waiters = queue.filter((w) => keys.has(keyOf(w.address)));
    queue = queue.filter((w) => !keys.has(keyOf(w.address)));
    return { addresses: [...byKey.values()], keys, waiters };
  };

  const drain = async () => {
    while (queue.length > 0) {
      const { addresses, keys, waiters } = nextBatch();
      sending = { keys, waiters };
      const results = await send(addresses).catch((err: unknown) => addresses.map(() => asError(err)));
      sending = null;
      for (const w of waiters) {
        const result = results[addresses.findIndex((a) => keyOf(a) === keyOf(w.address))];
        if (result === undefined) w.reject(new Error(`no top-up answer for ${w.address}`));
        else if (result instanceof Error) w.reject(result);
        else w.resolve(result);
      }
    }
  };

  return {
    request(address) {
      return new Promise<Hash>((resolve, reject) => {
        const waiter = { address, resolve, reject };
        // Its top-up is on its way: the same transaction answers this caller too.
        if (sending?.keys.has(keyOf(address))) return void sending.waiters.push(waiter);
        queue.push(waiter);
        if (!sending) void drain();
      });
    },
  };
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
