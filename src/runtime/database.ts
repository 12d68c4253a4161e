import type { ServiceConfig } from '../config';
import { createDatabase, type Database } from '../db/client';
import { applyMigrations } from '../db/migrate';
import { startEmbeddedPostgres } from '../embedded/postgres';

export const EMBEDDED_DATABASE = 'partner_payments';

export interface OpenedDatabase {
  db: Database;
  url: string;
  /** Closes the pool, and stops the embedded cluster if this process started it. */
  close(): Promise<void>;
  /** A forced stop of the embedded cluster this process started (nothing otherwise). */
  kill(): void;
}

/** DATABASE_URL when set (production shape); otherwise the project-local cluster under .data/. */
export async function openDatabase(config: ServiceConfig, opts: { databaseName?: string; fresh?: boolean } = {}): Promise<OpenedDatabase> {
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
  const db = createDatabase({ url, poolMax: config.database.poolMax, acquireTimeoutMs: config.database.acquireTimeoutMs });
  return {
    db,
    url,
    async close() {
      await db.close();
      await stopEmbedded();
    },
    kill: () => killEmbedded(),
  };
}
