import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync, statSync, accessSync, constants } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { withConnection } from '../db/one-connection';
import { pgPortLocal, postgresDataDir } from './paths';
import { isPortOpen, spawnLogged, tailFile } from './process';
import { DEFAULT_DATABASE_ROLES, ensureLoginRoles, type DatabaseRoles } from '../db/roles';

/**
 * The project-local PostgreSQL cluster in `<data>/postgres`, initialised by `scripts/setup.mjs`
 * (127.0.0.1 only, trust auth, superuser `postgres`, no Unix socket) and started here with pg_ctl.
 *
 * When the cluster is already running (say `npm start` runs while the tests run), it is reused and
 * `stop()` leaves it running. PostgreSQL refuses to run as root: when this process is root, pg_ctl runs
 * as the OS user owning the cluster folder (set-up makes that the `postgres` user).
 */

export interface EmbeddedPostgresOptions {
  /** Port to start the cluster on (default `PGPORT_LOCAL`, else config/toolchain.json ports.postgres). A running cluster keeps its port. */
  port?: number;
  /** Cluster folder (default `<data>/postgres`). */
  dataDir?: string;
  /** pg_ctl's wait for start-up, in seconds (default 60). */
  startTimeoutSeconds?: number;
}

export interface EmbeddedPostgres {
  host: string;
  /** Port the cluster listens on (the running cluster's port when it was reused). */
  port: number;
  /** True when this call started the cluster; only then does `stop()` stop it. */
  started: boolean;
  /** `postgresql://<user, default postgres>@127.0.0.1:<port>/<dbName>` */
  url(dbName: string, user?: string): string;
  /**
   * Creates the API's and the worker's logins unless they exist (no password: the cluster trusts
   * 127.0.0.1, as it does for the owner). Returns their names.
   */
  ensureRoles(): Promise<DatabaseRoles>;
  /** Creates the database unless it exists; `fresh: true` drops it first (closing its connections). Returns its URL. */
  ensureDatabase(name: string, options?: { fresh?: boolean }): Promise<string>;
  /** Stops the cluster if this call started it (pg_ctl stop -m fast). Safe to call twice. */
  stop(): Promise<void>;
  /** A forced stop, synchronous (pg_ctl stop -m immediate), if this call started the cluster. */
  kill(): void;
}

const HOST = '127.0.0.1';
const SUPERUSER = 'postgres';

/** Bin dir with pg_ctl/postgres matching the cluster's major version (PG_BINDIR overrides). */
export function findPostgresBinDir(clusterVersion?: string): string | undefined {
  const candidates: string[] = [];
  if (process.env.PG_BINDIR) candidates.push(process.env.PG_BINDIR);
  if (clusterVersion) candidates.push(path.join('/usr/lib/postgresql', clusterVersion, 'bin'));
  try {
    const versions = readdirSync('/usr/lib/postgresql')
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(path.join('/usr/lib/postgresql', v, 'bin'));
  } catch {
    /* not Debian-packaged */
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) if (dir) candidates.push(dir);
  return candidates.find((dir) =>
    ['pg_ctl', 'postgres'].every((bin) => {
      try {
        accessSync(path.join(dir, bin), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    }),
  );
}

function databaseUrl(port: number, dbName: string, user = SUPERUSER): string {
  return `postgresql://${encodeURIComponent(user)}@${HOST}:${port}/${encodeURIComponent(dbName)}`;
}

function quoteIdent(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_-]{0,62}$/.test(name)) throw new Error(`invalid database name: ${JSON.stringify(name)}`);
  return `"${name}"`;
}

/** The port of a cluster running on `dataDir`, from its postmaster.pid, when that process is alive. */
function runningPort(dataDir: string): number | undefined {
  let lines: string[];
  try {
    lines = readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!pid || !port) return undefined;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return undefined; // EPERM: alive, not ours
  }
  return port;
}

async function canQuery(port: number): Promise<boolean> {
  const client = new pg.Client({ connectionString: databaseUrl(port, 'postgres'), connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A cluster already running on `dataDir` that answers queries: its port. */
async function reusablePort(dataDir: string): Promise<number | undefined> {
  const port = runningPort(dataDir);
  if (port === undefined) return undefined;
  for (let i = 0; i < 50; i++) {
    // A cluster that is still starting up (another process is starting it) gets a few seconds.
    if ((await isPortOpen(port, HOST)) && (await canQuery(port))) return port;
    if (runningPort(dataDir) === undefined) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return undefined;
}

function runAs(dataDir: string): { uid?: number; gid?: number } {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  const st = statSync(dataDir);
  if (st.uid === 0) {
    throw new Error(
      `${dataDir} is owned by root, and PostgreSQL refuses to run as root; remove it and run \`node scripts/setup.mjs\` again`,
    );
  }
  return { uid: st.uid, gid: st.gid };
}

async function pgCtl(binDir: string, args: string[], dataDir: string): Promise<{ code: number | null; log: string }> {
  const proc = spawnLogged(path.join(binDir, 'pg_ctl'), args, { log: 'postgres.log', cwd: '/', ...runAs(dataDir) });
  const { code } = await proc.exit;
  return { code, log: proc.logFile };
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgres> {
  const configured = options.dataDir ?? postgresDataDir();
  if (!existsSync(path.join(configured, 'PG_VERSION'))) {
    throw new Error(`no PostgreSQL cluster in ${configured}; run \`node scripts/setup.mjs --for start\` first (or set DATABASE_URL)`);
  }
  const dataDir = realpathSync(configured); // the postgres OS user may not reach it through a symlink
  const version = readFileSync(path.join(dataDir, 'PG_VERSION'), 'utf8').trim();
  const binDir = findPostgresBinDir(version);
  if (!binDir) throw new Error(`PostgreSQL ${version} binaries (pg_ctl, postgres) not found; run \`node scripts/setup.mjs --for start\``);

  let port = await reusablePort(dataDir);
  let started = false;
  if (port === undefined) {
    port = await firstFreePort(options.port ?? pgPortLocal());
    const { code, log } = await pgCtl(
      binDir,
      ['start', '-D', dataDir, '-w', '-t', String(options.startTimeoutSeconds ?? 60), '-o', `-p ${port} -c listen_addresses=${HOST}`],
      dataDir,
    );
    if (code === 0) {
      started = true;
    } else {
      // Lost a race with another process starting the same cluster? Then use that one.
      const other = await reusablePort(dataDir);
      if (other === undefined) {
        throw new Error(`pg_ctl start failed (exit code ${code}); last lines of ${log}:\n${tailFile(log)}`);
      }
      port = other;
    }
  }

  const finalPort = port;
  let stopped = false;
  const admin = <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => withConnection(databaseUrl(finalPort, 'postgres'), fn);

  return {
    host: HOST,
    port: finalPort,
    started,
    url: (dbName, user) => databaseUrl(finalPort, dbName, user),
    ensureRoles: () => admin((client) => ensureLoginRoles(client, DEFAULT_DATABASE_ROLES)).then(() => DEFAULT_DATABASE_ROLES),
    async ensureDatabase(name, opts = {}) {
      const ident = quoteIdent(name);
      await admin(async (client) => {
        if (opts.fresh) await client.query(`DROP DATABASE IF EXISTS ${ident} WITH (FORCE)`);
        const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
        if (rowCount) return;
        try {
          await client.query(`CREATE DATABASE ${ident}`);
        } catch (err) {
          // 42P04 duplicate_database / 23505 unique_violation: a concurrent caller created it.
          const code = (err as { code?: string }).code;
          if (code !== '42P04' && code !== '23505') throw err;
        }
      });
      return databaseUrl(finalPort, name);
    },
    async stop() {
      if (stopped || !started) return;
      stopped = true;
      const { code, log } = await pgCtl(binDir, ['stop', '-D', dataDir, '-m', 'fast', '-w', '-t', '60'], dataDir);
      if (code !== 0 && runningPort(dataDir) !== undefined) {
        throw new Error(`pg_ctl stop failed (exit code ${code}); last lines of ${log}:\n${tailFile(log)}`);
      }
    },
    kill() {
      if (stopped || !started) return;
      stopped = true;
      spawnSync(path.join(binDir, 'pg_ctl'), ['stop', '-D', dataDir, '-m', 'immediate', '-w', '-t', '10'], {
        cwd: '/',
        stdio: 'ignore',
        ...runAs(dataDir),
      });
    },
  };
}

/**
 * The configured port, or the next free one when something else (say another clone's cluster)
 * already listens there: the URL is built from the port actually used.
 */
async function firstFreePort(preferred: number): Promise<number> {
  for (let port = preferred; port < preferred + 20; port += 1) {
    if (!(await isPortOpen(port, HOST))) return port;
  }
  throw new Error(`ports ${preferred}-${preferred + 19} on ${HOST} are all in use; set PGPORT_LOCAL or DATABASE_URL`);
}
