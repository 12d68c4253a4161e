// Step: PostgreSQL (skipped when DATABASE_URL is set). Debian's server binaries (installed with apt when
// missing and we are root) and a project-local cluster in <data>/postgres: 127.0.0.1 only, port
// config/toolchain.json ports.postgres (PGPORT_LOCAL or EMBEDDED_POSTGRES_PORT override), trust auth,
// superuser `postgres`. Only initialised here; src/embedded/postgres.ts starts it.
//
// PostgreSQL refuses to run as root. When set-up runs as root, the cluster directory is owned by the
// `postgres` OS user (created by Debian's package) and initdb runs as that user; the runtime helper
// starts pg_ctl as the owner of the directory. If the `postgres` user cannot reach <data>/postgres
// (e.g. the checkout lives under a 0700 home directory), the cluster is created in
// /var/lib/partner-payments/<hash of that path>/postgres and <data>/postgres is a symlink to it.

import fs from 'node:fs';
import path from 'node:path';
import {
  aptInstall,
  aptInstallHint,
  exists,
  isExecutable,
  isRoot,
  logFile,
  pgPortLocal,
  postgresDataDir,
  readIf,
  runOrFail,
  SetupError,
  sha256,
  show,
  which,
} from './util.mjs';

/** Newest Debian PostgreSQL bin dir holding initdb, pg_ctl and postgres (PG_BINDIR overrides). */
function findPostgresBinDir(env = process.env) {
  const candidates = [];
  if (env.PG_BINDIR) candidates.push(env.PG_BINDIR);
  try {
    const versions = fs
      .readdirSync('/usr/lib/postgresql')
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(path.join('/usr/lib/postgresql', v, 'bin'));
  } catch {
    /* not Debian-packaged */
  }
  const onPath = which('pg_ctl');
  if (onPath) candidates.push(path.dirname(onPath));
  return candidates.find((d) => ['initdb', 'pg_ctl', 'postgres'].every((b) => isExecutable(path.join(d, b))));
}

function lookupUser(name) {
  const passwd = readIf('/etc/passwd') || '';
  for (const line of passwd.split('\n')) {
    const f = line.split(':');
    if (f[0] === name) return { uid: Number(f[2]), gid: Number(f[3]) };
  }
  return undefined;
}

/** Whether uid/gid can traverse (x) every ancestor folder of `p`. */
function canTraverse(p, uid, gid) {
  let dir = path.resolve(p);
  for (;;) {
    let st;
    try {
      st = fs.statSync(dir);
    } catch {
      st = undefined;
    }
    if (st) {
      const bit = st.uid === uid ? 0o100 : st.gid === gid ? 0o010 : 0o001;
      if (!(st.mode & bit)) return false;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return true;
    dir = parent;
  }
}

export async function postgresql() {
  if (process.env.DATABASE_URL) return { skipped: true, note: 'DATABASE_URL is set' };
  const log = logFile('postgres');
  let binDir = findPostgresBinDir();
  let installedNow = false;
  if (!binDir) {
    const installed = await aptInstall(['postgresql'], log);
    binDir = findPostgresBinDir();
    if (!installed || !binDir) {
      throw new SetupError('PostgreSQL server binaries (initdb, pg_ctl, postgres) were not found under /usr/lib/postgresql/*/bin', [
        aptInstallHint('postgresql'),
        'or set DATABASE_URL to an existing PostgreSQL 15+ database, or PG_BINDIR to a folder holding initdb/pg_ctl/postgres',
      ]);
    }
    installedNow = true;
  }
  const port = pgPortLocal();
  const pgdata = postgresDataDir();
  if (exists(path.join(pgdata, 'PG_VERSION'))) {
    return { cached: !installedNow, note: `cluster ${show(pgdata)}, port ${port}` };
  }

  // Who runs the server: the current user, or the `postgres` OS user when we are root.
  let owner;
  if (isRoot()) {
    owner = lookupUser('postgres');
    if (!owner) {
      throw new SetupError('running as root, and there is no `postgres` OS user to own the cluster (PostgreSQL refuses to run as root)', [
        "useradd --system --home /var/lib/postgresql --shell /bin/bash postgres   (Debian's postgresql package creates it)",
      ]);
    }
  }

  // Where the cluster lives. Fallback (root only): a folder the postgres user can reach, symlinked.
  let target = pgdata;
  try {
    const st = fs.lstatSync(pgdata);
    if (st.isSymbolicLink()) target = path.resolve(path.dirname(pgdata), fs.readlinkSync(pgdata));
    else if (st.isDirectory() && fs.readdirSync(pgdata).length > 0) {
      throw new SetupError(`${pgdata} exists but is not a PostgreSQL cluster (no PG_VERSION)`, [
        `remove it (rm -rf ${pgdata}) and run this again`,
      ]);
    }
  } catch (err) {
    if (err instanceof SetupError) throw err;
  }
  fs.mkdirSync(path.dirname(pgdata), { recursive: true });
  if (owner && target === pgdata && !canTraverse(path.dirname(pgdata), owner.uid, owner.gid)) {
    target = path.join('/var/lib/partner-payments', sha256(pgdata).slice(0, 12), 'postgres');
    fs.rmSync(pgdata, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 });
    fs.symlinkSync(target, pgdata);
  }

  // initdb into a temporary sibling, then rename (an interrupted initdb never leaves a half cluster).
  const tmp = `${target}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { mode: 0o700 });
  if (owner) fs.chownSync(tmp, owner.uid, owner.gid);
  await runOrFail(
    'initdb',
    path.join(binDir, 'initdb'),
    ['-D', tmp, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-locale', '--no-instructions'],
    { log, cwd: '/', ...(owner || {}) },
    ['see ' + log],
  );

  fs.appendFileSync(
    path.join(tmp, 'postgresql.conf'),
    [
      '',
      '# --- partner-payments (scripts/setup.mjs) ---',
      "listen_addresses = '127.0.0.1'",
      `port = ${port}`,
      "unix_socket_directories = ''",
      'max_connections = 200',
      '',
    ].join('\n'),
  );
  fs.writeFileSync(
    path.join(tmp, 'pg_hba.conf'),
    [
      '# partner-payments local cluster (scripts/setup.mjs): TCP on 127.0.0.1 only, no Unix socket.',
      '# TYPE  DATABASE  USER  ADDRESS       METHOD',
      'host    all       all   127.0.0.1/32  trust',
      '',
    ].join('\n'),
  );

  try {
    fs.renameSync(tmp, target);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!exists(path.join(target, 'PG_VERSION'))) throw err; // else: a concurrent set-up won the race
  }
  const who = owner ? ' (owned by OS user postgres)' : '';
  return { note: `initialised ${show(pgdata)}${target !== pgdata ? ` -> ${target}` : ''}${who}, port ${port}` };
}
