import type { PoolRole, ServiceConfig } from '../config';
import { createDatabase, type Database } from '../db/client';
import { applyMigrations } from '../db/migrate';
import { startEmbeddedPostgres } from '../embedded/postgres';

export const EMBEDDED_DATABASE = 'partner_payments';

export interface OpenedDatabase {
  /** The pool of the role this process opened the database for (the worker's, unless told). */
  db: Database;
  /**
   * The pool of one role, opened on first use with that role's settings and login: when the API and
   * the worker share a process, each still has its own connections, so neither can starve the other.
   */
  pool(role: PoolRole): Database;
  /** The owner's URL when this process has it (it migrates), else the opened role's. */
  url: string;
  /** Each role's login (LISTEN connections use it too). */
  urlOf(role: PoolRole): string;
  /** Closes the pools, and stops the embedded cluster if this process started it. */
  close(): Promise<void>;
  /** A forced stop of the embedded cluster this process started (nothing otherwise). */
  kill(): void;
}

interface Logins {
  owner?: string;
  api?: string;
  worker?: string;
}

/**
 * DATABASE_URL (the owner, who migrates and grants) and each role's own URL when set (production
 * shape); otherwise the project-local cluster under .data/, where the owner is its superuser and the
 * API and the worker log in as roles of their own.
 */
export async function openDatabase(
  config: ServiceConfig,
  opts: { databaseName?: string; fresh?: boolean; role?: PoolRole } = {},
): Promise<OpenedDatabase> {
  const { url, apiUrl, workerUrl } = config.database;
  let logins: Logins = { owner: url, api: apiUrl ?? url, worker: workerUrl ?? url };
  let roles = config.database.roles;
  let stopEmbedded = async () => undefined as void;
  let killEmbedded = () => undefined as void;
  if (!url && !apiUrl && !workerUrl) {
    const pg = await startEmbeddedPostgres({ port: config.database.embeddedPort });
    const name = opts.databaseName ?? EMBEDDED_DATABASE;
    await pg.ensureDatabase(name, { fresh: opts.fresh ?? false });
    roles = await pg.ensureRoles();
    logins = { owner: pg.url(name), api: pg.url(name, roles.api), worker: pg.url(name, roles.worker) };
    stopEmbedded = () => pg.stop();
    killEmbedded = () => pg.kill();
  }
  // Without the owner's URL (an API or a worker in production) the migrate step has run already.
  if (logins.owner) await applyMigrations(logins.owner, roles ? { grants: roles } : {});
  const urlOf = (role: PoolRole): string => {
    const login = logins[role];
    if (!login) throw new Error(`${role === 'api' ? 'API' : 'WORKER'}_DATABASE_URL (or DATABASE_URL) is required for the ${role}`);
    return login;
  };
  const pools = new Map<PoolRole, Database>();
  const pool = (role: PoolRole): Database => {
    let db = pools.get(role);
    if (!db) {
      const s = config.database.pools[role];
      db = createDatabase({
        url: urlOf(role),
        poolMax: s.max,
        acquireTimeoutMs: s.acquireTimeoutMs,
        statementTimeoutMs: s.statementTimeoutMs,
      });
      pools.set(role, db);
    }
    return db;
  };
  const role = opts.role ?? 'worker';
  return {
    db: pool(role),
    pool,
    url: logins.owner ?? urlOf(role),
    urlOf,
    async close() {
      for (const db of pools.values()) await db.close();
      pools.clear();
      await stopEmbedded();
    },
    kill: () => killEmbedded(),
  };
}
