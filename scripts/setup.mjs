#!/usr/bin/env node
// Scripted, idempotent, cached toolchain set-up for the Partner Payments API.
//
//   node scripts/setup.mjs [--for start|test|bench|all]      (default: all)
//
// Plain Node ESM with no npm dependencies: it runs before node_modules exists.
// Every step prints exactly one line with its duration; a step that fails prints what is missing and
// how to fix it, and the script exits non-zero. Everything expensive is cached, so a second run takes
// a second or two:
//
//   a. node dependencies     `npm ci` when node_modules is missing or package-lock.json changed
//                            (stamp: node_modules/.setup-stamp).
//   b. prisma client         `prisma generate` offline, when prisma/schema/**, prisma.config.ts or the
//                            Prisma version changed (stamp: src/generated/prisma/.setup-stamp).
//   c. temporal test server  (test, all) Temporal's Java time-skipping test server from Maven Central
//                            (tools/temporal-test-server/pom.xml) plus an AppCDS archive and a wrapper
//                            script, in <cache>/temporal-test-server-<version>/.
//   d. temporal CLI          `go install github.com/temporalio/cli/cmd/temporal@v1.5.1` into
//                            <cache>/temporal-cli-1.5.1/ (the dev server used by `npm start`).
//   e. postgresql            (skipped when DATABASE_URL is set) Debian's PostgreSQL binaries and a
//                            project-local cluster in <data>/postgres, listening on 127.0.0.1 only,
//                            port 54329 (PGPORT_LOCAL overrides), trust auth, superuser `postgres`.
//                            Only installed and initialised here; src/embedded/postgres.ts starts it.
//
// Environment:
//   PARTNER_PAYMENTS_CACHE   cache dir for the built/fetched tools (default ~/.cache/partner-payments)
//   DATA_DIR                 project data dir (default <repo>/.data); logs go to <data>/logs/
//   PGPORT_LOCAL             port of the project-local PostgreSQL cluster (default: EMBEDDED_POSTGRES_PORT,
//                            else 54329); written into its postgresql.conf as the default port
//   DATABASE_URL             when set, no local PostgreSQL is prepared
//
// PostgreSQL refuses to run as root. When set-up runs as root, the cluster directory is owned by the
// `postgres` OS user (created by Debian's package) and initdb runs as that user; the runtime helper
// starts pg_ctl as the owner of the directory. If the `postgres` user cannot reach <data>/postgres
// (e.g. the checkout lives under a 0700 home directory), the cluster is created in
// /var/lib/partner-payments/<hash of that path>/postgres and <data>/postgres is a symlink to it.
//
// The path helpers below are exported so other scripts can share the cache-dir logic
// (src/embedded/paths.ts duplicates them for TypeScript code).

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// ---------------------------------------------------------------------------------------------------
// Shared path logic (exported)
// ---------------------------------------------------------------------------------------------------

export const TEMPORAL_CLI_VERSION = '1.5.1';
export const DEFAULT_PGPORT_LOCAL = 54329;

/** Repository root (the folder holding package.json and scripts/). */
export function projectRoot() {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
}

/** `${PARTNER_PAYMENTS_CACHE:-~/.cache/partner-payments}` */
export function cacheDir(env = process.env) {
  const fromEnv = env.PARTNER_PAYMENTS_CACHE;
  return fromEnv ? path.resolve(fromEnv) : path.join(os.homedir(), '.cache', 'partner-payments');
}

/** `${DATA_DIR:-<repo>/.data}` (relative DATA_DIR is resolved against the repo root). */
export function dataDir(env = process.env, root = projectRoot()) {
  return env.DATA_DIR ? path.resolve(root, env.DATA_DIR) : path.join(root, '.data');
}

/** Version of io.temporal:temporal-test-server pinned in tools/temporal-test-server/pom.xml. */
export function testServerVersion(root = projectRoot()) {
  const pom = fs.readFileSync(path.join(root, 'tools', 'temporal-test-server', 'pom.xml'), 'utf8');
  const m = /<temporal\.test-server\.version>\s*([^<\s]+)\s*</.exec(pom);
  if (!m) throw new Error('tools/temporal-test-server/pom.xml has no <temporal.test-server.version>');
  return m[1];
}

export function testServerDir(env = process.env, root = projectRoot()) {
  return path.join(cacheDir(env), `temporal-test-server-${testServerVersion(root)}`);
}

/** Executable wrapper: `temporal-test-server <port> [--enable-time-skipping]`. */
export function testServerWrapperPath(env = process.env, root = projectRoot()) {
  return path.join(testServerDir(env, root), 'temporal-test-server');
}

export function temporalCliPath(env = process.env) {
  return path.join(cacheDir(env), `temporal-cli-${TEMPORAL_CLI_VERSION}`, 'temporal');
}

export function postgresDataDir(env = process.env, root = projectRoot()) {
  return path.join(dataDir(env, root), 'postgres');
}

/** `${PGPORT_LOCAL:-${EMBEDDED_POSTGRES_PORT:-54329}}` (EMBEDDED_POSTGRES_PORT is the app's own name for it). */
export function pgPortLocal(env = process.env) {
  const raw = env.PGPORT_LOCAL || env.EMBEDDED_POSTGRES_PORT || DEFAULT_PGPORT_LOCAL;
  const p = Number(raw);
  if (!Number.isInteger(p) || p <= 0 || p > 65535) throw new Error(`PGPORT_LOCAL / EMBEDDED_POSTGRES_PORT is not a port: ${raw}`);
  return p;
}

// ---------------------------------------------------------------------------------------------------
// Small utilities
// ---------------------------------------------------------------------------------------------------

class SetupError extends Error {
  /** @param {string} message what is missing  @param {string[]} [fix] how to fix it  @param {string} [log] */
  constructor(message, fix = [], log) {
    super(message);
    this.fix = fix;
    this.log = log;
  }
}

/** `p` relative to the repo when inside it, else absolute. */
const show = (p) => {
  const rel = path.relative(projectRoot(), p);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : p;
};
const sha256 = (data) => createHash('sha256').update(data).digest('hex');
const exists = (p) => fs.existsSync(p);
const readIf = (p) => { try { return fs.readFileSync(p, 'utf8'); } catch { return undefined; } };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

function fmtDuration(ms) {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const m = Math.floor(ms / 60_000);
  return `${m}m${Math.round((ms % 60_000) / 1000)}s`;
}

/** First executable called `name` on PATH (plus extra dirs), or undefined. */
function which(name, extraDirs = []) {
  const dirs = [...(process.env.PATH || '').split(path.delimiter), ...extraDirs].filter(Boolean);
  for (const dir of dirs) {
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch { /* next */ }
  }
  return undefined;
}

function logFile(name) {
  const dir = path.join(dataDir(), 'logs');
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, `setup-${name}.log`);
}

function tail(file, lines = 15) {
  const text = readIf(file) || '';
  return text.trimEnd().split('\n').slice(-lines).map((l) => `    | ${l}`).join('\n');
}

/**
 * Runs a command with its output appended to `log`. Resolves with the exit code (never rejects on a
 * non-zero exit; rejects when the command cannot be started).
 */
function run(cmd, args, { log, env, cwd, uid, gid } = {}) {
  return new Promise((resolve, reject) => {
    const fd = fs.openSync(log, 'a');
    fs.writeSync(fd, `\n$ ${cmd} ${args.join(' ')}   # ${new Date().toISOString()}\n`);
    let child;
    try {
      child = spawn(cmd, args, {
        cwd: cwd || projectRoot(),
        env: { ...process.env, ...env },
        stdio: ['ignore', fd, fd],
        ...(uid !== undefined ? { uid, gid } : {}),
      });
    } catch (err) {
      fs.closeSync(fd);
      reject(err);
      return;
    }
    child.on('error', (err) => { fs.closeSync(fd); reject(err); });
    child.on('exit', (code, signal) => { fs.closeSync(fd); resolve(code ?? (signal ? 128 : 1)); });
  });
}

async function runOrFail(what, cmd, args, opts, fix) {
  const code = await run(cmd, args, opts);
  if (code !== 0) {
    throw new SetupError(`${what} failed (exit code ${code}); last lines of ${opts.log}:\n${tail(opts.log)}`, fix, opts.log);
  }
}

function freePort() {
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

/**
 * One unary gRPC call over plain HTTP/2 (no dependencies). `body` is the serialized protobuf message.
 * Resolves { ok, status } where status is the grpc-status (0 = OK), or { ok:false, error }.
 */
export function grpcCall(port, method, body = Buffer.alloc(0), timeoutMs = 3000) {
  return new Promise((resolve) => {
    let settled = false;
    const client = http2.connect(`http://127.0.0.1:${port}`);
    const done = (result) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done({ ok: false, error: 'timeout' }), timeoutMs);
    client.on('error', (err) => done({ ok: false, error: err.message }));
    const req = client.request({
      ':method': 'POST',
      ':path': method,
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    let status;
    req.on('response', (h) => { if (h['grpc-status'] !== undefined) status = String(h['grpc-status']); });
    req.on('trailers', (h) => { if (h['grpc-status'] !== undefined) status = String(h['grpc-status']); });
    req.on('data', () => {});
    req.on('end', () => done({ ok: status === '0', status }));
    req.on('error', (err) => done({ ok: false, error: err.message }));
    const frame = Buffer.alloc(5 + body.length);
    frame.writeUInt32BE(body.length, 1);
    body.copy(frame, 5);
    req.end(frame);
  });
}

const WORKFLOW_SERVICE = '/temporal.api.workflowservice.v1.WorkflowService';
const TEST_SERVICE = '/temporal.api.testservice.v1.TestService';

/** protobuf: length-delimited field (strings and sub-messages). */
function pbBytes(field, value) {
  const buf = Buffer.isBuffer(value) ? value : Buffer.from(value, 'utf8');
  const varint = [];
  let n = buf.length;
  do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; varint.push(b); } while (n);
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...varint]), buf]);
}

async function waitForGrpc(port, { timeoutMs, isAlive }) {
  const start = Date.now();
  for (;;) {
    const r = await grpcCall(port, `${WORKFLOW_SERVICE}/GetSystemInfo`, Buffer.alloc(0), 2000);
    if (r.ok) return Date.now() - start;
    if (isAlive && !isAlive()) throw new Error('process exited before answering');
    if (Date.now() - start > timeoutMs) throw new Error(`no gRPC answer on port ${port} after ${timeoutMs} ms (${r.error || `grpc-status ${r.status}`})`);
    await sleep(25);
  }
}

function aptInstallHint(pkgs) {
  return `${isRoot() ? '' : 'sudo '}apt-get update && ${isRoot() ? '' : 'sudo '}apt-get install -y ${pkgs}`;
}

async function aptInstall(pkgs, log) {
  if (!isRoot() || !which('apt-get')) return false;
  const env = { DEBIAN_FRONTEND: 'noninteractive' };
  await runOrFail('apt-get update', 'apt-get', ['update'], { log, env }, [aptInstallHint(pkgs.join(' '))]);
  await runOrFail(`apt-get install ${pkgs.join(' ')}`, 'apt-get', ['install', '-y', '--no-install-recommends', ...pkgs], { log, env }, [aptInstallHint(pkgs.join(' '))]);
  return true;
}

function isExecutable(p) {
  try { fs.accessSync(p, fs.constants.X_OK); return fs.statSync(p).size > 0; } catch { return false; }
}

/**
 * Runs `fn` holding a lock folder (`mkdir` is atomic), so concurrent set-ups never build the same
 * thing twice: a second one waits, then returns `{ cached }` once `isDone()` holds. Stale locks
 * (their process is gone) are taken over.
 */
async function withLock(lock, isDone, fn) {
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
      try { if (pid) { process.kill(pid, 0); alive = true; } } catch { /* gone */ }
      if (!alive && pid) { fs.rmSync(lock, { recursive: true, force: true }); continue; }
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
function repoLock(name) {
  return path.join(os.tmpdir(), `partner-payments-setup-${sha256(projectRoot()).slice(0, 12)}-${name}.lock`);
}

// ---------------------------------------------------------------------------------------------------
// a. Node dependencies
// ---------------------------------------------------------------------------------------------------

/** True when node_modules/.package-lock.json (npm's record of the installed tree) matches the lockfile. */
function installedTreeMatchesLock(root) {
  const hidden = readIf(path.join(root, 'node_modules', '.package-lock.json'));
  if (!hidden) return false;
  try {
    const want = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8')).packages || {};
    const have = JSON.parse(hidden).packages || {};
    for (const [key, entry] of Object.entries(want)) {
      if (key === '') continue;
      const got = have[key];
      if (!got) {
        if (entry.optional || entry.peer) continue; // e.g. other platforms' binaries
        return false;
      }
      if (got.version !== entry.version || (entry.integrity && got.integrity && got.integrity !== entry.integrity)) return false;
    }
    return Object.keys(have).every((key) => key in want);
  } catch {
    return false;
  }
}

async function stepNodeDependencies() {
  const root = projectRoot();
  const lockPath = path.join(root, 'package-lock.json');
  if (!exists(lockPath)) {
    throw new SetupError('package-lock.json is missing', ['run `npm install` once to create it, and commit it']);
  }
  const want = sha256(fs.readFileSync(lockPath));
  const nodeModules = path.join(root, 'node_modules');
  const stamp = path.join(nodeModules, '.setup-stamp');
  if (exists(nodeModules) && readIf(stamp) === want) return { cached: true };
  // One install at a time per checkout: a concurrent set-up waits, then finds it done.
  return withLock(repoLock('npm'), () => exists(nodeModules) && readIf(stamp) === want, async () => {
    if (exists(nodeModules) && installedTreeMatchesLock(root)) {
      fs.writeFileSync(stamp, want);
      return { cached: true, note: 'installed tree matches lockfile' };
    }
    const npm = which('npm');
    if (!npm) throw new SetupError('npm is not on PATH', ['install Node.js 20+ with npm (e.g. from nodejs.org or `apt-get install nodejs npm`)']);
    const log = logFile('npm');
    const fix = [
      'check network access to the npm registry (npm config get registry)',
      'if package.json and package-lock.json disagree, run `npm install` and commit the lockfile',
    ];
    const logStart = exists(log) ? fs.statSync(log).size : 0;
    const code = await run(npm, ['ci', '--no-audit', '--no-fund'], { log });
    if (code === 0) {
      fs.writeFileSync(stamp, want);
      return {};
    }
    // npm ci refuses a lockfile that lacks other platforms' optional packages ("Missing: X from lock
    // file"), which happens when the registry in use does not serve them (so no npm can record them).
    // `npm install --no-save` installs exactly the lockfile's tree and never writes the lockfile; the
    // installed tree is then checked against the lockfile.
    const output = (readIf(log) || '').slice(logStart);
    if (!/package\.json and package-lock\.json[\s\S]*in sync/.test(output) || !/Missing: /.test(output)) {
      throw new SetupError(`npm ci failed (exit code ${code}); last lines of ${log}:\n${tail(log)}`, fix, log);
    }
    const lockBytes = fs.readFileSync(lockPath);
    const code2 = await run(npm, ['install', '--no-save', '--no-audit', '--no-fund'], { log });
    if (!fs.readFileSync(lockPath).equals(lockBytes)) fs.writeFileSync(lockPath, lockBytes);
    if (code2 !== 0) throw new SetupError(`npm install --no-save failed (exit code ${code2}); last lines of ${log}:\n${tail(log)}`, fix, log);
    if (!installedTreeMatchesLock(root)) {
      throw new SetupError(`the installed packages do not match package-lock.json (npm ci refused it: ${(/Missing: [^\n]*/.exec(output) || [''])[0]})`, fix, log);
    }
    fs.writeFileSync(stamp, want);
    return { note: 'npm ci refused the lockfile (other platforms\' optional packages missing); installed it with npm install --no-save' };
  });
}

// ---------------------------------------------------------------------------------------------------
// b. Prisma client
// ---------------------------------------------------------------------------------------------------

function listFilesSorted(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((x, y) => (x.name < y.name ? -1 : 1))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(p);
    }
  };
  if (exists(dir)) walk(dir);
  return out;
}

async function stepPrismaGenerate() {
  const root = projectRoot();
  const schemaDir = path.join(root, 'prisma', 'schema');
  const files = listFilesSorted(schemaDir);
  const schemaText = files.filter((f) => f.endsWith('.prisma')).map((f) => fs.readFileSync(f, 'utf8')).join('\n');
  if (!/^\s*generator\s+\w+\s*\{/m.test(schemaText)) {
    return { skipped: true, note: 'no generator block in prisma/schema/*.prisma yet' };
  }
  const prismaPkg = readIf(path.join(root, 'node_modules', 'prisma', 'package.json'));
  const prismaBin = path.join(root, 'node_modules', '.bin', 'prisma');
  if (!prismaPkg || !exists(prismaBin)) {
    throw new SetupError('the prisma CLI is not installed in node_modules', ['add `prisma` to devDependencies and run `npm install`']);
  }
  const hash = createHash('sha256');
  hash.update(`prisma ${JSON.parse(prismaPkg).version}\n`);
  for (const f of files) hash.update(`${path.relative(root, f)}\n`).update(fs.readFileSync(f));
  hash.update(readIf(path.join(root, 'prisma.config.ts')) || '');
  const want = hash.digest('hex');

  // Output folder from the generator block (relative to the schema folder); default src/generated/prisma.
  const outMatch = /^\s*output\s*=\s*"([^"]+)"/m.exec(schemaText);
  const outDir = outMatch ? path.resolve(schemaDir, outMatch[1]) : path.join(root, 'src', 'generated', 'prisma');
  const stamp = path.join(outDir, '.setup-stamp');
  if (readIf(stamp) === want) return { cached: true };

  return withLock(repoLock('prisma'), () => readIf(stamp) === want, async () => {
    const log = logFile('prisma');
    await runOrFail('prisma generate', prismaBin, ['generate'], {
      log,
      env: {
        PRISMA_ENGINES_CHECKSUM_IGNORE_MISSING: '1',
        PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY || (exists('/bin/false') ? '/bin/false' : process.execPath),
        PRISMA_HIDE_UPDATE_MESSAGE: '1',
        CHECKPOINT_DISABLE: '1',
      },
    }, ['fix the schema error shown above (prisma/schema/*.prisma), then run this again']);
    fs.mkdirSync(outDir, { recursive: true });
    fs.writeFileSync(stamp, want);
    return {};
  });
}

// ---------------------------------------------------------------------------------------------------
// c. Temporal Java time-skipping test server
// ---------------------------------------------------------------------------------------------------

const JVM_FAST_FLAGS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-XX:-UsePerfData', '-Xlog:cds=off', '-Xlog:cds+dynamic=off'];

function javaIdentity(java) {
  const real = fs.realpathSync(java);
  const release = readIf(path.join(path.dirname(path.dirname(real)), 'release')) || '';
  return `${real}\n${release}`;
}

/** Exercises the test server over gRPC so the AppCDS archive holds the classes the SDK needs. */
async function trainTestServer(port) {
  const ns = pbBytes(1, 'default');
  const calls = [
    [`${WORKFLOW_SERVICE}/GetSystemInfo`, Buffer.alloc(0)],
    [`${WORKFLOW_SERVICE}/GetClusterInfo`, Buffer.alloc(0)],
    [`${WORKFLOW_SERVICE}/DescribeNamespace`, ns],
    [`${TEST_SERVICE}/GetCurrentTime`, Buffer.alloc(0)],
    [`${TEST_SERVICE}/LockTimeSkipping`, Buffer.alloc(0)],
    [`${TEST_SERVICE}/UnlockTimeSkipping`, Buffer.alloc(0)],
    // StartWorkflowExecution{namespace, workflow_id, workflow_type{name}, task_queue{name}, identity, request_id}
    [`${WORKFLOW_SERVICE}/StartWorkflowExecution`, Buffer.concat([
      ns, pbBytes(2, 'setup-warmup'), pbBytes(3, pbBytes(1, 'warmup')), pbBytes(4, pbBytes(1, 'setup-warmup')),
      pbBytes(9, 'setup'), pbBytes(10, '00000000-0000-4000-8000-000000000000'),
    ])],
    // DescribeWorkflowExecution / GetWorkflowExecutionHistory{namespace, execution{workflow_id}}
    [`${WORKFLOW_SERVICE}/DescribeWorkflowExecution`, Buffer.concat([ns, pbBytes(2, pbBytes(1, 'setup-warmup'))])],
    [`${WORKFLOW_SERVICE}/GetWorkflowExecutionHistory`, Buffer.concat([ns, pbBytes(2, pbBytes(1, 'setup-warmup'))])],
    [`${WORKFLOW_SERVICE}/TerminateWorkflowExecution`, Buffer.concat([ns, pbBytes(2, pbBytes(1, 'setup-warmup'))])],
  ];
  for (let round = 0; round < 2; round++) {
    for (const [method, body] of calls) await grpcCall(port, method, body, 5000);
  }
}

function stopChild(child, timeoutMs = 20_000) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) { resolve(); return; }
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => { clearTimeout(timer); resolve(); });
    child.kill('SIGTERM');
  });
}

/** Starts `cmd args` (port appended) and returns ms until GetSystemInfo answers; leaves it running. */
async function startAndTime(cmd, args, port, log) {
  const fd = fs.openSync(log, 'a');
  const start = Date.now();
  const child = spawn(cmd, [...args, String(port)], { stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  let exited = false;
  child.on('exit', () => { exited = true; });
  child.on('error', () => { exited = true; });
  try {
    await waitForGrpc(port, { timeoutMs: 60_000, isAlive: () => !exited });
  } catch (err) {
    await stopChild(child);
    throw new SetupError(`the test server did not start: ${err.message}; last lines of ${log}:\n${tail(log)}`, [
      'check that `java -version` reports Java 17 or newer',
    ], log);
  }
  return { child, port, ms: Date.now() - start };
}

function wrapperScript({ version, java, dir, jars }) {
  const cp = jars.map((j) => path.join(dir, 'lib', j)).join(':');
  return `#!/bin/sh
# Generated by scripts/setup.mjs: Temporal's Java time-skipping test server ${version}.
# Usage: temporal-test-server <port> [--enable-time-skipping]
# Fast JVM start-up (the Temporal SDK gives the server 5 seconds to answer): C1 only, serial GC and an
# AppCDS archive (cds.jsa) recorded at set-up time. The class path is listed explicitly (sorted) so it
# always matches the one the archive was recorded with.
DIR='${dir}'
CDS=""
if [ -f "$DIR/cds.jsa" ]; then CDS="-XX:SharedArchiveFile=$DIR/cds.jsa -Xshare:auto"; fi
exec '${java}' ${JVM_FAST_FLAGS.join(' ')} $CDS -cp '${cp}' io.temporal.testserver.TestServer "$@"
`;
}

async function stepTemporalTestServer() {
  const root = projectRoot();
  const pomPath = path.join(root, 'tools', 'temporal-test-server', 'pom.xml');
  if (!exists(pomPath)) throw new SetupError('tools/temporal-test-server/pom.xml is missing', ['restore it from git']);
  const version = testServerVersion(root);
  const dir = testServerDir();
  const wrapper = testServerWrapperPath();
  const log = logFile('temporal-test-server');

  let java = which('java');
  let mvn = which('mvn');
  const stampFile = path.join(dir, '.setup-stamp');
  const want = () => sha256(`${fs.readFileSync(pomPath, 'utf8')}\n${javaIdentity(java)}\n${wrapperScript({ version, java, dir, jars: [] })}`);
  const isDone = () => Boolean(java) && readIf(stampFile) === want() && exists(wrapper) && exists(path.join(dir, 'cds.jsa'));
  if (isDone()) return { cached: true };
  return withLock(`${dir}.lock`, isDone, async () => {
    if (!java || !mvn) {
      const installed = await aptInstall(['default-jre-headless', 'maven'], log);
      java = which('java');
      mvn = which('mvn');
      if (!installed || !java || !mvn) {
        throw new SetupError(`${!java ? 'java' : 'mvn'} is not on PATH (needed to fetch and run Temporal's Java test server)`, [
          aptInstallHint('default-jre-headless maven'),
          'or install any Java 17+ JRE and Apache Maven 3.6+ and put `java` and `mvn` on PATH',
        ]);
      }
    }

    // Fetch the jars into a temporary folder, then move it into place (safe against concurrent runs).
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    const tmp = `${dir}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    await runOrFail('mvn dependency:copy-dependencies', mvn, [
      '-q', '-B', '-f', pomPath, 'dependency:copy-dependencies', `-DoutputDirectory=${path.join(tmp, 'lib')}`,
    ], { log }, [
      'check access to Maven Central (mvn help:effective-settings shows mirrors/proxies)',
      `the pinned version io.temporal:temporal-test-server:${version} must exist on Maven Central`,
    ]);
    const jars = fs.readdirSync(path.join(tmp, 'lib')).filter((j) => j.endsWith('.jar')).sort();
    if (!jars.some((j) => j.startsWith(`temporal-test-server-${version}`))) {
      throw new SetupError(`Maven did not fetch temporal-test-server-${version}.jar`, ['see ' + log]);
    }
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);

    // Write the wrapper without the archive first; record the AppCDS archive with a training run.
    fs.writeFileSync(wrapper, wrapperScript({ version, java, dir, jars }), { mode: 0o755 });
    const cp = jars.map((j) => path.join(dir, 'lib', j)).join(':');
    const archiveTmp = path.join(dir, `cds.jsa.tmp-${process.pid}`);
    const trainArgs = [...JVM_FAST_FLAGS, `-XX:ArchiveClassesAtExit=${archiveTmp}`, '-cp', cp, 'io.temporal.testserver.TestServer'];
    const cold = await startAndTime(java, trainArgs, await freePort(), log);
    await trainTestServer(cold.port);
    await stopChild(cold.child); // SIGTERM: the JVM writes the archive while exiting
    if (!exists(archiveTmp)) {
      throw new SetupError(`the JVM did not write the AppCDS archive; last lines of ${log}:\n${tail(log)}`, ['needs Java 13 or newer (java -version)']);
    }
    fs.renameSync(archiveTmp, path.join(dir, 'cds.jsa'));

    // Verify the wrapper (with the archive) and measure a warm start.
    const warm = await startAndTime(wrapper, [], await freePort(), log);
    await stopChild(warm.child);
    fs.writeFileSync(stampFile, want());
    return { note: `v${version}; answers gRPC in ${fmtDuration(cold.ms)} cold, ${fmtDuration(warm.ms)} with AppCDS` };
  });
}

// ---------------------------------------------------------------------------------------------------
// d. Temporal CLI (dev server)
// ---------------------------------------------------------------------------------------------------

async function stepTemporalCli() {
  const bin = temporalCliPath();
  if (isExecutable(bin)) return { cached: true };
  const binDir = path.dirname(bin);
  fs.mkdirSync(binDir, { recursive: true });

  // One build at a time: a second set-up waits for the first one's binary.
  return withLock(`${binDir}.lock`, () => isExecutable(bin), async () => {
    const go = which('go', ['/usr/local/go/bin', path.join(os.homedir(), 'go', 'bin'), path.join(os.homedir(), 'sdk', 'go', 'bin')]);
    if (!go) {
      throw new SetupError('`go` is not installed (needed once to build the Temporal CLI dev server)', [
        'install Go 1.21 or newer (Go downloads the 1.25 toolchain the CLI needs from the Go module proxy), e.g. from https://go.dev/dl/',
        `or build elsewhere and copy the binary to ${bin}`,
      ]);
    }
    const tmpBin = `${binDir}.tmp-${process.pid}`;
    fs.rmSync(tmpBin, { recursive: true, force: true });
    const log = logFile('temporal-cli');
    await runOrFail(`go install github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`, go, [
      'install', `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`,
    ], {
      log,
      cwd: os.tmpdir(),
      env: {
        GOBIN: tmpBin,
        GOTOOLCHAIN: process.env.GOTOOLCHAIN || 'auto',
        GOFLAGS: process.env.GOFLAGS || '-buildvcs=false',
      },
    }, ['check access to the Go module proxy (go env GOPROXY)', 'Go 1.21+ is needed; see ' + log]);
    fs.renameSync(path.join(tmpBin, 'temporal'), bin);
    fs.rmSync(tmpBin, { recursive: true, force: true });
    return {};
  });
}

// ---------------------------------------------------------------------------------------------------
// e. PostgreSQL
// ---------------------------------------------------------------------------------------------------

/** Newest Debian PostgreSQL bin dir holding initdb, pg_ctl and postgres (PG_BINDIR overrides). */
export function findPostgresBinDir(env = process.env) {
  const candidates = [];
  if (env.PG_BINDIR) candidates.push(env.PG_BINDIR);
  try {
    const versions = fs.readdirSync('/usr/lib/postgresql').filter((v) => /^\d+(\.\d+)?$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(path.join('/usr/lib/postgresql', v, 'bin'));
  } catch { /* not Debian-packaged */ }
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
    try { st = fs.statSync(dir); } catch { st = undefined; }
    if (st) {
      const bit = st.uid === uid ? 0o100 : st.gid === gid ? 0o010 : 0o001;
      if (!(st.mode & bit)) return false;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return true;
    dir = parent;
  }
}

async function stepPostgres() {
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
        'useradd --system --home /var/lib/postgresql --shell /bin/bash postgres   (Debian\'s postgresql package creates it)',
      ]);
    }
  }

  // Where the cluster lives. Fallback (root only): a folder the postgres user can reach, symlinked.
  let target = pgdata;
  try {
    const st = fs.lstatSync(pgdata);
    if (st.isSymbolicLink()) target = path.resolve(path.dirname(pgdata), fs.readlinkSync(pgdata));
    else if (st.isDirectory() && fs.readdirSync(pgdata).length > 0) {
      throw new SetupError(`${pgdata} exists but is not a PostgreSQL cluster (no PG_VERSION)`, [`remove it (rm -rf ${pgdata}) and run this again`]);
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
  await runOrFail('initdb', path.join(binDir, 'initdb'), [
    '-D', tmp, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-locale', '--no-instructions',
  ], { log, cwd: '/', ...(owner || {}) }, ['see ' + log]);

  fs.appendFileSync(path.join(tmp, 'postgresql.conf'), [
    '',
    '# --- partner-payments (scripts/setup.mjs) ---',
    "listen_addresses = '127.0.0.1'",
    `port = ${port}`,
    "unix_socket_directories = ''",
    'max_connections = 200',
    '',
  ].join('\n'));
  fs.writeFileSync(path.join(tmp, 'pg_hba.conf'), [
    '# partner-payments local cluster (scripts/setup.mjs): TCP on 127.0.0.1 only, no Unix socket.',
    '# TYPE  DATABASE  USER  ADDRESS       METHOD',
    'host    all       all   127.0.0.1/32  trust',
    '',
  ].join('\n'));

  try {
    fs.renameSync(tmp, target);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!exists(path.join(target, 'PG_VERSION'))) throw err; // else: a concurrent set-up won the race
  }
  const who = owner ? ' (owned by OS user postgres)' : '';
  return { note: `initialised ${show(pgdata)}${target !== pgdata ? ` -> ${target}` : ''}${who}, port ${port}` };
}

// ---------------------------------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------------------------------

const STEPS = [
  { name: 'node dependencies', run: stepNodeDependencies, for: ['start', 'test', 'bench', 'all'] },
  { name: 'prisma client', run: stepPrismaGenerate, for: ['start', 'test', 'bench', 'all'] },
  { name: 'temporal test server', run: stepTemporalTestServer, for: ['test', 'all'] },
  { name: `temporal CLI ${TEMPORAL_CLI_VERSION}`, run: stepTemporalCli, for: ['start', 'test', 'bench', 'all'] },
  { name: 'postgresql', run: stepPostgres, for: ['start', 'test', 'bench', 'all'] },
];

function parseArgs(argv) {
  let target = 'all';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--for') target = argv[++i] ?? '';
    else if (a.startsWith('--for=')) target = a.slice('--for='.length);
    else if (a === '-h' || a === '--help') {
      console.log('usage: node scripts/setup.mjs [--for start|test|bench|all]');
      process.exit(0);
    } else {
      console.error(`setup: unknown argument ${a}\nusage: node scripts/setup.mjs [--for start|test|bench|all]`);
      process.exit(2);
    }
  }
  if (!['start', 'test', 'bench', 'all'].includes(target)) {
    console.error(`setup: --for must be start, test, bench or all (got "${target}")`);
    process.exit(2);
  }
  return target;
}

async function main() {
  const target = parseArgs(process.argv.slice(2));
  const t0 = Date.now();
  const tty = process.stdout.isTTY;
  for (const step of STEPS.filter((s) => s.for.includes(target))) {
    const start = Date.now();
    const head = `setup: ${step.name} ... `;
    if (tty) process.stdout.write(head);
    try {
      const r = (await step.run()) || {};
      const extra = [fmtDuration(Date.now() - start), r.cached ? 'cached' : '', r.note || ''].filter(Boolean).join(', ');
      process.stdout.write(`${tty ? '' : head}${r.skipped ? 'skipped' : 'ok'} (${extra})\n`);
    } catch (err) {
      process.stdout.write(`${tty ? '' : head}FAILED (${fmtDuration(Date.now() - start)})\n`);
      if (err instanceof SetupError) {
        console.error(`setup: ${step.name}: ${err.message}`);
        for (const f of err.fix) console.error(`  fix: ${f}`);
      } else {
        console.error(`setup: ${step.name}: ${err && err.stack ? err.stack : err}`);
      }
      process.exit(1);
    }
  }
  console.log(`setup: done for --for ${target} in ${fmtDuration(Date.now() - t0)}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href) {
  main().catch((err) => {
    console.error(`setup: ${err && err.stack ? err.stack : err}`);
    process.exit(1);
  });
}
