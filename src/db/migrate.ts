import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { applyRoleGrants, type DatabaseRoles } from './roles';

/**
 * The project's own migration runner. It applies `prisma/migrations/<timestamp>_<name>/migration.sql`
 * exactly as `prisma migrate deploy` would, and records them in Prisma Migrate's own
 * `_prisma_migrations` table, so the real `prisma migrate deploy` (where its schema engine is
 * available) sees the same history. Prisma's CLI cannot run here: its schema engine cannot be
 * downloaded.
 *
 * - migrations run in name order, each in its own transaction together with its history row;
 * - checksum = sha256 (hex) of migration.sql, as Prisma computes it; an applied migration whose file
 *   changed stops the run with an error (the same file with CRLF/LF line endings is accepted, as
 *   Prisma does);
 * - a PostgreSQL advisory lock (Prisma Migrate's own key) makes concurrent runs safe: the second one
 *   waits, then finds nothing left to do.
 */

/** Prisma Migrate's advisory lock key (so this runner and `prisma migrate deploy` exclude each other). */
export const MIGRATION_ADVISORY_LOCK_KEY = 72707369;

export interface MigrationFile {
  name: string;
  file: string;
  sql: string;
  checksum: string;
}

export interface ApplyMigrationsOptions {
  /** Folder of migration folders (default `<repo>/prisma/migrations`). */
  migrationsDir?: string;
  /** The API's and the worker's logins, granted their access after the migrations (src/db/roles.ts). */
  grants?: DatabaseRoles;
  /** Progress messages (default: none). */
  log?: (message: string) => void;
}

export interface ApplyMigrationsResult {
  /** Migrations applied by this call, in order. */
  applied: string[];
  /** Migrations that were already recorded as applied. */
  alreadyApplied: string[];
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

function defaultMigrationsDir(): string {
  let dir = __dirname;
  for (;;) {
    const candidate = path.join(dir, 'prisma', 'migrations');
    if (existsSync(path.join(dir, 'package.json')) && existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(__dirname, '..', '..', 'prisma', 'migrations');
    dir = parent;
  }
}

const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

/** The migration folders, in the order Prisma applies them (lexicographic by folder name). */
export function listMigrations(migrationsDir: string = defaultMigrationsDir()): MigrationFile[] {
  if (!existsSync(migrationsDir)) return [];
  return readdirSync(migrationsDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(path.join(migrationsDir, e.name, 'migration.sql')))
    .map((e) => e.name)
    .sort()
    .map((name) => {
      const file = path.join(migrationsDir, name, 'migration.sql');
      const bytes = readFileSync(file);
      return { name, file, sql: bytes.toString('utf8'), checksum: sha256(bytes) };
    });
}

/** Prisma accepts a recorded checksum computed over the same script with other line endings. */
function checksumMatches(migration: MigrationFile, recorded: string): boolean {
  if (migration.checksum === recorded) return true;
  const lf = migration.sql.replace(/\r\n/g, '\n');
  return sha256(lf) === recorded || sha256(lf.replace(/\n/g, '\r\n')) === recorded;
}

const CREATE_HISTORY_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface HistoryRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

/** Applies every migration not yet recorded in `_prisma_migrations` to the database at `databaseUrl`. */
export async function applyMigrations(databaseUrl: string, options: ApplyMigrationsOptions = {}): Promise<ApplyMigrationsResult> {
  const log = options.log ?? (() => undefined);
  const migrations = listMigrations(options.migrationsDir ?? defaultMigrationsDir());
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'partner-payments-migrate' });
  client.on('error', () => undefined); // errors surface through the awaited queries
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_ADVISORY_LOCK_KEY]);
    try {
      await client.query(CREATE_HISTORY_TABLE);
      const { rows } = await client.query<HistoryRow>(
        'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at, migration_name',
      );
      const live = rows.filter((r) => r.rolled_back_at === null);

      const failed = live.filter((r) => r.finished_at === null);
      if (failed.length > 0) {
        throw new MigrationError(
          `migration ${failed.map((r) => r.migration_name).join(', ')} failed earlier and is recorded as unfinished in _prisma_migrations; ` +
            'fix the database by hand, then delete that row (or mark it rolled back) before migrating again',
        );
      }
      const applied = new Map(live.map((r) => [r.migration_name, r]));
      for (const m of migrations) {
        const row = applied.get(m.name);
        if (row && !checksumMatches(m, row.checksum)) {
          throw new MigrationError(
            `migration ${m.name} was changed after it was applied (recorded checksum ${row.checksum}, file ${m.checksum}); ` +
              'never edit an applied migration: restore the file and add a new migration instead',
          );
        }
      }
      const known = new Set(migrations.map((m) => m.name));
      for (const r of live) {
        if (!known.has(r.migration_name)) log(`warning: applied migration ${r.migration_name} has no folder in the migrations directory`);
      }

      const result: ApplyMigrationsResult = { applied: [], alreadyApplied: [] };
      for (const m of migrations) {
        if (applied.has(m.name)) {
          result.alreadyApplied.push(m.name);
          continue;
        }
        log(`applying migration ${m.name}`);
        await client.query('BEGIN');
        try {
          const started = await client.query<{ now: Date }>('SELECT clock_timestamp() AS now');
          await client.query(m.sql);
          await client.query(
            `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count)
             VALUES ($1, $2, clock_timestamp(), $3, NULL, NULL, $4, 1)`,
            [randomUUID(), m.checksum, m.name, started.rows[0]?.now ?? new Date()],
          );
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw new MigrationError(`migration ${m.name} failed and was rolled back: ${(err as Error).message}`);
        }
        result.applied.push(m.name);
      }
      // Under the same lock: two runs granting at once can fail on the same catalog rows.
      if (options.grants) await applyRoleGrants(client, options.grants);
      return result;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_ADVISORY_LOCK_KEY]).catch(() => undefined);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}
