import { randomUUID } from 'node:crypto';
import type { PrismaClient } from '../../db/client';

export interface Lease {
  /** Extends the lease; throws LeaseLostError when another holder took it (ours had expired). */
  renew(): Promise<void>;
}

export class LeaseLostError extends Error {
  constructor(readonly key: string) {
    super(`lost the lease on ${key}`);
    this.name = 'LeaseLostError';
  }
}

export class LeaseTimeoutError extends Error {
  constructor(
    readonly key: string,
    waitedMs: number,
  ) {
    super(`could not take the lease on ${key} within ${waitedMs} ms`);
    this.name = 'LeaseTimeoutError';
  }
}

export interface LeaseOptions {
  /** How long the lease lasts unless renewed: a crashed holder blocks others at most this long. */
  leaseMs?: number;
  /** How long to wait for another holder before giving up (a transient failure). */
  waitMs?: number;
}

/**
 * Runs fn while holding a lease on `key`: a row in sender_locks, taken with one short statement and
 * released with another. Unlike an advisory lock it holds no pooled connection while the holder
 * talks to the chain, and a holder that dies only blocks others until its lease expires.
 */
export async function withLease<T>(
  prisma: PrismaClient,
  key: string,
  fn: (lease: Lease) => Promise<T>,
  opts: LeaseOptions = {},
): Promise<T> {
  const leaseMs = opts.leaseMs ?? 60_000;
  const waitMs = opts.waitMs ?? 90_000;
  const holder = randomUUID();
  const take = async () => {
    const rows = await prisma.$queryRaw<Array<{ holder: string }>>`
      INSERT INTO sender_locks (key, holder, expires_at)
      VALUES (${key}, ${holder}, now() + make_interval(secs => ${leaseMs / 1000}))
      ON CONFLICT (key) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
        WHERE sender_locks.expires_at < now()
      RETURNING holder`;
    return rows.length === 1;
  };
  const deadline = Date.now() + waitMs;
  for (let pause = 20; !(await take()); pause = Math.min(pause * 2, 500)) {
    if (Date.now() > deadline) throw new LeaseTimeoutError(key, waitMs);
    await new Promise((r) => setTimeout(r, pause + Math.floor(Math.random() * pause)));
  }
  const lease: Lease = {
    async renew() {
      const renewed = await prisma.$executeRaw`
        UPDATE sender_locks SET expires_at = now() + make_interval(secs => ${leaseMs / 1000})
        WHERE key = ${key} AND holder = ${holder}`;
      if (renewed !== 1) throw new LeaseLostError(key);
    },
  };
  try {
    return await fn(lease);
  } finally {
    await prisma.$executeRaw`DELETE FROM sender_locks WHERE key = ${key} AND holder = ${holder}`;
  }
}
