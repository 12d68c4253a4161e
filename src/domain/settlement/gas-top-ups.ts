import type { Address, Hash } from 'viem';

/** Top-ups sent under one treasury lease at most: their broadcasts stay well inside the lease. */
export const MAX_TOP_UPS_PER_BATCH = 50;

/** One payer's top-up: how much it is sent from the treasury. */
export interface TopUp {
  address: Address;
  amountWei: bigint;
}

/** Sends each top-up, in order; answers each one's transaction, or why it was not sent. */
export type SendTopUps = (topUps: TopUp[]) => Promise<Array<Hash | Error>>;

export interface TopUpBatcher {
  /**
   * The transaction that tops this address up: sent with the next batch, with the most any of its
   * callers asked for. A caller whose address is on its way already gets that transaction, whatever it
   * sends: it reads the balance again and asks once more if still short.
   */
  request(address: Address, amountWei: bigint): Promise<Hash>;
}

interface Waiter extends TopUp {
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

  const nextBatch = (): { topUps: TopUp[]; keys: Set<string>; waiters: Waiter[] } => {
    const byKey = new Map<string, TopUp>();
    for (const w of queue) {
      const key = keyOf(w.address);
      const asked = byKey.get(key);
      if (asked) asked.amountWei = asked.amountWei > w.amountWei ? asked.amountWei : w.amountWei;
      else if (byKey.size < MAX_TOP_UPS_PER_BATCH) byKey.set(key, { address: w.address, amountWei: w.amountWei });
    }
    const keys = new Set(byKey.keys());
    const waiters = queue.filter((w) => keys.has(keyOf(w.address)));
    queue = queue.filter((w) => !keys.has(keyOf(w.address)));
    return { topUps: [...byKey.values()], keys, waiters };
  };

  const drain = async () => {
    while (queue.length > 0) {
      const { topUps, keys, waiters } = nextBatch();
      sending = { keys, waiters };
      const results = await send(topUps).catch((err: unknown) => topUps.map(() => asError(err)));
      sending = null;
      for (const w of waiters) {
        const result = results[topUps.findIndex((t) => keyOf(t.address) === keyOf(w.address))];
        if (result === undefined) w.reject(new Error(`no top-up answer for ${w.address}`));
        else if (result instanceof Error) w.reject(result);
        else w.resolve(result);
      }
    }
  };

  return {
    request(address, amountWei) {
      return new Promise<Hash>((resolve, reject) => {
        const waiter = { address, amountWei, resolve, reject };
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
