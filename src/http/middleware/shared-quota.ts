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
}

/**
 * A fixed-window quota per key (a credential), counted in this process and shared through PostgreSQL.
 * A request is decided in memory: allowed while the last known shared count plus what this process
 * took since is under `points`. The first request of a key in a window waits for the shared count;
 * after that each process adds what it took at most every `syncMs`, in the background. So one API
 * process is exact, and N processes can together overshoot by what the others took in the last
 * `syncMs` (see docs/decisions.md "Rate limits in memory").
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

  async take(key: string): Promise<QuotaDecision> {
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
    if (used >= this.policy.points) return { allowed: false, remaining: 0, msBeforeReset };
    w.unsent += 1;
    if (!w.flight && Date.now() - w.lastSyncAt >= (this.policy.syncMs ?? 100)) void this.#sync(key, w);
    return { allowed: true, remaining: this.policy.points - used - 1, msBeforeReset };
  }

  /** Adds what this process took to the shared count, and learns everyone's. One at a time per key. */
  #sync(key: string, w: Window): Promise<void> {
    w.flight ??= (async () => {
      try {
        w.sending = w.unsent;
        w.unsent = 0;
        try {
          const res = await this.#store.penalty(`${key}:${w.id}`, w.sending);
          w.known = res.consumedPoints;
          w.synced = true;
        } catch {
          // PostgreSQL unreachable: decide from this process's own count until it is back.
          w.unsent += w.sending;
          w.synced = true;
        }
        w.sending = 0;
        w.lastSyncAt = Date.now();
      } finally {
        w.flight = undefined;
      }
    })();
    return w.flight;
  }

  #forgetOldWindows(current: number): void {
    if (this.#windows.size < 1024) return;
    for (const [k, w] of this.#windows) if (w.id < current) this.#windows.delete(k);
  }
}
