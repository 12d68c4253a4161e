// Shared by the set-up steps: where things live, the pinned versions, and small process/lock helpers.
// Plain Node ESM with no npm dependencies (set-up runs before node_modules exists).
// src/embedded/paths.ts mirrors the path functions for the TypeScript code; both read
// config/toolchain.json for versions and ports.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// ---------------------------------------------------------------------------------------------------
// Where things live
// ---------------------------------------------------------------------------------------------------

/** Repository root (the folder holding package.json and scripts/). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** config/toolchain.json: tool versions and default ports. */
export const toolchain = JSON.parse(fs.readFileSync(path.join(ROOT, 'config', 'toolchain.json'), 'utf8'));

/** `${PARTNER_PAYMENTS_CACHE:-~/.cache/partner-payments}`: tools built or fetched once per machine. */
export function cacheDir(env = process.env) {
  return env.PARTNER_PAYMENTS_CACHE ? path.resolve(env.PARTNER_PAYMENTS_CACHE) : path.join(os.homedir(), '.cache', 'partner-payments');
}

/** `${DATA_DIR:-<repo>/.data}` (a relative DATA_DIR is resolved against the repo root). */
export function dataDir(env = process.env) {
  return env.DATA_DIR ? path.resolve(ROOT, env.DATA_DIR) : path.join(ROOT, '.data');
}

export const TEST_SERVER_POM = path.join(ROOT, 'tools', 'temporal-test-server', 'pom.xml');

/**
 * `<cache>/temporal-test-server-<version>-<hash of the pom>`: a folder per set of inputs, so checkouts
 * of different revisions sharing the cache never rebuild each other's (src/embedded/paths.ts agrees).
 */
export function testServerDir(env = process.env) {
  const key = sha256(fs.readFileSync(TEST_SERVER_POM)).slice(0, 8);
  return path.join(cacheDir(env), `temporal-test-server-${toolchain.temporalTestServer.version}-${key}`);
}

export function temporalCliPath(env = process.env) {
  return path.join(cacheDir(env), `temporal-cli-${toolchain.temporalCli.version}`, 'temporal');
}

/** `<cache>/temporal-server-<version>/`: Temporal Server (`server`), its SQL schema tool (`sql`) and its PostgreSQL schemas (`schema/`). */
export function temporalServerDir(env = process.env) {
  return path.join(cacheDir(env), `temporal-server-${toolchain.temporalServer.version}`);
}

/** `<cache>/schemathesis-<version>/bin/schemathesis`: the fuzzer, in a virtualenv of its own. */
export function schemathesisPath(env = process.env) {
  return path.join(cacheDir(env), `schemathesis-${toolchain.schemathesis.version}`, 'bin', 'schemathesis');
}

export function postgresDataDir(env = process.env) {
  return path.join(dataDir(env), 'postgres');
}

/** `${PGPORT_LOCAL:-${EMBEDDED_POSTGRES_PORT:-<toolchain ports.postgres>}}` */
export function pgPortLocal(env = process.env) {
  const raw = env.PGPORT_LOCAL || env.EMBEDDED_POSTGRES_PORT || toolchain.ports.postgres;
  const p = Number(raw);
  if (!Number.isInteger(p) || p <= 0 || p > 65535) throw new Error(`PGPORT_LOCAL / EMBEDDED_POSTGRES_PORT is not a port: ${raw}`);
  return p;
}

// ---------------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------------

/** A failure the user can act on: what is missing, and the fixes to print under it. */
export class SetupError extends Error {
  /** @param {string} message  @param {string[]} [fix]  @param {string} [log] */
  constructor(message, fix = [], log) {
    super(message);
    this.fix = fix;
    this.log = log;
  }
}

export const sha256 = (data) => createHash('sha256').update(data).digest('hex');
export const exists = (p) => fs.existsSync(p);
export const readIf = (p) => {
  try {
    return fs.readFileSync(p, 'utf8');
  } catch {
    return undefined;
  }
};
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** `p` relative to the repo when inside it, else absolute. */
export function show(p) {
  const rel = path.relative(ROOT, p);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : p;
}

export function fmtDuration(ms) {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  return `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s`;
}

export function isExecutable(p) {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).size > 0;
  } catch {
    return false;
  }
}

/** First executable called `name` on PATH (plus extra dirs), or undefined. */
export function which(name, extraDirs = []) {
  const dirs = [...(process.env.PATH || '').split(path.delimiter), ...extraDirs].filter(Boolean);
  for (const dir of dirs) {
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

/** `<data>/logs/setup-<name>.log`: where a step's command output goes. */
export function logFile(name) {
  const dir = path.join(dataDir(), 'logs');
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, `setup-${name}.log`);
}

export function tail(file, lines = 15) {
  return (readIf(file) || '')
    .trimEnd()
    .split('\n')
    .slice(-lines)
    .map((l) => `    | ${l}`)
    .join('\n');
}

/**
 * Runs a command with its output appended to `log`. Resolves with the exit code (never rejects on a
 * non-zero exit; rejects when the command cannot be started).
 */
export function run(cmd, args, { log, env, cwd, uid, gid } = {}) {
  return new Promise((resolve, reject) => {
    const fd = fs.openSync(log, 'a');
    fs.writeSync(fd, `\n$ ${cmd} ${args.join(' ')}   # ${new Date().toISOString()}\n`);
    let child;
    try {
      child = spawn(cmd, args, {
        cwd: cwd || ROOT,
        env: { ...process.env, ...env },
        stdio: ['ignore', fd, fd],
        ...(uid !== undefined ? { uid, gid } : {}),
      });
    } catch (err) {
      fs.closeSync(fd);
      reject(err);
      return;
    }
    child.on('error', (err) => {
      fs.closeSync(fd);
      reject(err);
    });
    child.on('exit', (code, signal) => {
      fs.closeSync(fd);
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}

/** `run`, throwing a SetupError (with the log's last lines and `fix`) on a non-zero exit. */
export async function runOrFail(what, cmd, args, opts, fix) {
  const code = await run(cmd, args, opts);
  if (code !== 0) {
    throw new SetupError(`${what} failed (exit code ${code}); last lines of ${opts.log}:\n${tail(opts.log)}`, fix, opts.log);
  }
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (srv.address());
      srv.close(() => resolve(port));
    });
  });
}

export function aptInstallHint(pkgs) {
  const sudo = isRoot() ? '' : 'sudo ';
  return `${sudo}apt-get update && ${sudo}apt-get install -y ${pkgs}`;
}

/** Installs Debian packages when we are root and apt-get exists; false when we can't. */
export async function aptInstall(pkgs, log) {
  if (!isRoot() || !which('apt-get')) return false;
  const env = { DEBIAN_FRONTEND: 'noninteractive' };
  const fix = [aptInstallHint(pkgs.join(' '))];
  await runOrFail('apt-get update', 'apt-get', ['update'], { log, env }, fix);
  await runOrFail(`apt-get install ${pkgs.join(' ')}`, 'apt-get', ['install', '-y', '--no-install-recommends', ...pkgs], { log, env }, fix);
  return true;
}

/**
 * Runs `fn` holding a lock folder (`mkdir` is atomic), so concurrent set-ups never build the same
 * thing twice: a second one waits, then returns `{ cached }` once `isDone()` holds. Stale locks
 * (their process is gone) are taken over.
 */
export async function withLock(lock, isDone, fn) {
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch {
      if (isDone()) return { cached: true, note: 'prepared by a concurrent set-up' };
      const pid = Number(readIf(path.join(lock, 'pid')));
      let alive = false;
      try {
        if (pid) {
          process.kill(pid, 0);
          alive = true;
        }
      } catch {
        /* gone */
      }
      if (!alive && pid) {
        fs.rmSync(lock, { recursive: true, force: true });
        continue;
      }
      await sleep(1000);
    }
  }
  try {
    if (isDone()) return { cached: true };
    return await fn();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** A lock folder private to this checkout (outside node_modules, which npm ci deletes). */
export function repoLock(name) {
  return path.join(os.tmpdir(), `partner-payments-setup-${sha256(ROOT).slice(0, 12)}-${name}.lock`);
}
