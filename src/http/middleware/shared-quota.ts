import type pg from 'pg';
import { RateLimiterPostgres } from 'rate-limiter-flexible';

export interface QuotaDecision {
  allowed: boolean;
  remaining: number;
  msBeforeReset: number;
}

interface Window {
  id: number;
  /** Every process's count as of this process's last exchange with PostgreSQL (its own included). */
  known: number;
  /** Taken here and not yet added to the shared count. */
  unsent: number;
  /** Taken here and being added right now. */
  sending: number;
  synced: boolean;
  lastSyncAt: number;
  flight?: Promise<void>;
  /** The one-shot sync of what was counted since the last one, when that was less than `syncMs` ago. */
  later?: NodeJS.Timeout;
}

/**
 * A fixed-window quota per key (a credential), counted in this process and shared through PostgreSQL.
 * A request is decided in memory: allowed while the last known shared count plus what this process
 * took since is under `points`. The first request of a key in a window waits for the shared count;
 * after that each process adds what it took at most every `syncMs`, in the background, and no later
 * than `syncMs` after it took it (a one-shot timer, even if no request follows). So one API process
 * is exact, and N processes can together overshoot by what the others took in the last `syncMs`
 * (see docs/decisions/api-conventions.md "Rate limits in memory").
 */
export class SharedQuota {
  readonly #store: RateLimiterPostgres;
  readonly #windows = new Map<string, Window>();

  constructor(
    pool: pg.Pool,
    readonly policy: { points: number; windowSeconds: number; syncMs?: number },
  ) {
    this.#store = new RateLimiterPostgres({
      storeClient: pool,
      tableName: 'rate_limits',
      tableCreated: true,
      clearExpiredByTimeout: false,
      keyPrefix: 'quota',
      points: policy.points,
      // Keys carry their window's number; the row outlives the window so late adds land in it.
      duration: policy.windowSeconds * 2,
    });
  }

  /** Counts one request of `key`, if its window has room. */
  async take(key: string): Promise<QuotaDecision> {
    const { w, decision } = await this.#decide(key);
    if (decision.allowed) {
      w.unsent += 1;
      this.#syncSoon(key, w);
    }
    return decision;
  }

  async #decide(key: string): Promise<{ w: Window; decision: QuotaDecision }> {
    const windowMs = this.policy.windowSeconds * 1000;
    const now = Date.now();
    const id = Math.floor(now / windowMs);
    let w = this.#windows.get(key);
    if (!w || w.id !== id) {
      w = { id, known: 0, unsent: 0, sending: 0, synced: false, lastSyncAt: 0 };
      this.#windows.set(key, w);
      this.#forgetOldWindows(id);
    }
    if (!w.synced) await this.#sync(key, w);
    const used = w.known + w.sending + w.unsent;
    const msBeforeReset = (id + 1) * windowMs - now;
    if (used >= this.policy.points) return { w, decision: { allowed: false, remaining: 0, msBeforeReset } };
    return { w, decision: { allowed: true, remaining: this.policy.points - used - 1, msBeforeReset } };
  }

  /** Syncs now if the last sync is `syncMs` old, else once it will be; a sync under way follows up itself. */
  #syncSoon(key: string, w: Window): void {
    if (w.flight || w.later) return;
    const wait = (this.policy.syncMs ?? 100) - (Date.now() - w.lastSyncAt);
    if (wait <= 0) {
      void this.#sync(key, w);
      return;
    }
    w.later = setTimeout(() => {
      w.later = undefined;
      void this.#sync(key, w);
    }, wait);
    w.later.unref();
  }

  /** Adds what this process took to the shared count, and learns everyone's. One at a time per key. */
  #sync(key: string, w: Window): Promise<void> {
    w.flight ??= (async () => {
      try {
        w.sending = w.unsent;
        w.unsent = 0;
        let reached = false;
        try {
          const res = await this.#store.penalty(`${key}:${w.id}`, w.sending);
          w.known = res.consumedPoints;
          reached = true;
        } catch {
          // PostgreSQL unreachable: decide from this process's own count until it is back (the next request retries).
          w.unsent += w.sending;
        }
        w.synced = true;
        w.sending = 0;
        w.lastSyncAt = Date.now();
        return reached;
      } finally {
        w.flight = undefined;
      }
    })().then((reached) => {
      // What was counted while this sync ran goes next.
      if (reached && w.unsent !== 0) this.#syncSoon(key, w);
    });
    return w.flight;
  }

  #forgetOldWindows(current: number): void {
    if (this.#windows.size < 1024) return;
    for (const [k, w] of this.#windows) if (w.id < current) this.#windows.delete(k);
  }
}
