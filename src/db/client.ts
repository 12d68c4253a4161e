import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { Prisma, PrismaClient } from '../generated/prisma/client';

export type { PrismaClient };
export { Prisma };

// Amounts are NUMERIC(78, 0) atomic units read back as Decimal, and turned into strings and bigints
// with toString(): decimal.js writes 1e21 and above in exponent notation, which BigInt() refuses
// (a Payment of 10^15 USDC was accepted, then every read of it failed). Never use exponent notation.
Prisma.Decimal.set({ toExpPos: 9e15, toExpNeg: -9e15 });

export interface Database {
  prisma: PrismaClient;
  pool: pg.Pool;
  /**
   * A pool of its own for the single-row bookkeeping a request does around its work (an
   * Idempotency-Key's claim, completion and release): when the request's work runs the main pool
   * out, the key is still released, so the retry a 503 invites runs instead of finding it claimed.
   */
  bookkeeping: pg.Pool;
  close(): Promise<void>;
}

/** Connections of the bookkeeping pool: its statements are single-row and take a millisecond. */
const BOOKKEEPING_POOL_MAX = 2;

/**
 * One pg pool shared by Prisma and the few raw queries (rate limits, migrations), and the small
 * bookkeeping pool beside it. Each has a bounded size and an acquire timeout, so overload fails fast instead of hanging (pg's default waits
 * forever); a statement timeout, when set, bounds each query too.
 */
export function createDatabase(opts: { url: string; poolMax: number; acquireTimeoutMs: number; statementTimeoutMs?: number }): Database {
  const poolOf = (max: number) => {
    const p = new pg.Pool({
      connectionString: opts.url,
      max,
      connectionTimeoutMillis: opts.acquireTimeoutMs,
      idleTimeoutMillis: 30_000,
      ...(opts.statementTimeoutMs === undefined ? {} : { statement_timeout: opts.statementTimeoutMs }),
    });
    // An idle client's error (e.g. the server restarting) must not crash the process.
    p.on('error', () => undefined);
    // Nor may one checked out between two statements: a restart or failover ends every connection,
    // and pg emits that on the client, where an unheard 'error' ends the process. The statement in
    // flight, or the next one, fails instead, and the pool drops the client on its release.
    p.on('connect', (client) => client.on('error', () => undefined));
    return p;
  };
  const pool = poolOf(opts.poolMax);
  const bookkeeping = poolOf(BOOKKEEPING_POOL_MAX);
  // An interactive transaction waits for its connection as long as any query does: Prisma's own
  // maxWait (2 s by default) would otherwise be a second, unconfigured acquire timeout (P2028).
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool), transactionOptions: { maxWait: opts.acquireTimeoutMs } });
  return {
    prisma,
    pool,
    bookkeeping,
    async close() {
      await prisma.$disconnect();
      await pool.end().catch(() => undefined);
      await bookkeeping.end().catch(() => undefined);
    },
  };
}
