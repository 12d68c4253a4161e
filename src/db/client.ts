import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client';

export type { PrismaClient };
export { Prisma } from '../generated/prisma/client';

export interface Database {
  prisma: PrismaClient;
  pool: pg.Pool;
  close(): Promise<void>;
}

/**
 * One pg pool shared by Prisma and the few raw queries (rate limits, migrations). The pool has a
 * bounded size and an acquire timeout, so overload fails fast instead of hanging (pg's default waits
 * forever); a statement timeout, when set, bounds each query too.
 */
export function createDatabase(opts: { url: string; poolMax: number; acquireTimeoutMs: number; statementTimeoutMs?: number }): Database {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.poolMax,
    connectionTimeoutMillis: opts.acquireTimeoutMs,
    idleTimeoutMillis: 30_000,
    ...(opts.statementTimeoutMs === undefined ? {} : { statement_timeout: opts.statementTimeoutMs }),
  });
  // An idle client's error (e.g. the server restarting) must not crash the process.
  pool.on('error', () => undefined);
  // An interactive transaction waits for its connection as long as any query does: Prisma's own
  // maxWait (2 s by default) would otherwise be a second, unconfigured acquire timeout (P2028).
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool), transactionOptions: { maxWait: opts.acquireTimeoutMs } });
  return {
    prisma,
    pool,
    async close() {
      await prisma.$disconnect();
      await pool.end().catch(() => undefined);
    },
  };
}
