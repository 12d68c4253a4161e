import type { PoolRole, ServiceConfig } from '../config';
import { createDatabase, type Database } from '../db/client';
import { applyMigrations } from '../db/migrate';
import { startEmbeddedPostgres } from '../embedded/postgres';

export const EMBEDDED_DATABASE = 'partner_payments';

export interface OpenedDatabase {
  /** The pool of the role this process opened the database for (the worker's, unless told). */
  db: Database;
  /**
   * The pool of one role, opened on first use with that role's settings: when the API and the worker
   * share a process, each still has its own connections, so neither can starve the other.
   */
  pool(role: PoolRole): Database;
  url: string;
  /** Closes the pools, and stops the embedded cluster if this process started it. */
  close(): Promise<void>;
  /** A forced stop of the embedded cluster this process started (nothing otherwise). */
  kill(): void;
}

/** DATABASE_URL when set (production shape); otherwise the project-local cluster under .data/. */
export async function openDatabase(
  config: ServiceConfig,
  opts: { databaseName?: string; fresh?: boolean; role?: PoolRole } = {},
): Promise<OpenedDatabase> {
  let url = config.database.url;
  let stopEmbedded = async () => undefined as void;
  let killEmbedded = () => undefined as void;
  if (!url) {
    const pg = await startEmbeddedPostgres({ port: config.database.embeddedPort });
    const name = opts.databaseName ?? EMBEDDED_DATABASE;
    await pg.ensureDatabase(name, { fresh: opts.fresh ?? false });
    url = pg.url(name);
    stopEmbedded = () => pg.stop();
    killEmbedded = () => pg.kill();
  }
  await applyMigrations(url);
  const dbUrl = url;
  const pools = new Map<PoolRole, Database>();
  const pool = (role: PoolRole): Database => {
    let db = pools.get(role);
    if (!db) {
      const s = config.database.pools[role];
      db = createDatabase({ url: dbUrl, poolMax: s.max, acquireTimeoutMs: s.acquireTimeoutMs, statementTimeoutMs: s.statementTimeoutMs });
      pools.set(role, db);
    }
    return db;
  };
  return {
    db: pool(opts.role ?? 'worker'),
    pool,
    url,
    async close() {
      for (const db of pools.values()) await db.close();
      pools.clear();
      await stopEmbedded();
    },
    kill: () => killEmbedded(),
  };
}
