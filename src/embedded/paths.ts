import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Where the embedded servers and the tools prepared by `scripts/setup.mjs` live. This duplicates the
 * path logic exported by scripts/setup.mjs (which cannot be imported here: it is ESM and runs before
 * node_modules exists); keep the two in step.
 */

export const TEMPORAL_CLI_VERSION = '1.5.1';
export const DEFAULT_PGPORT_LOCAL = 54329;

let cachedRoot: string | undefined;

/** Repository root: the nearest folder above this file holding package.json and scripts/setup.mjs. */
export function projectRoot(): string {
  if (cachedRoot) return cachedRoot;
  let dir = __dirname;
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'scripts', 'setup.mjs'))) {
      cachedRoot = dir;
      return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  cachedRoot = path.resolve(__dirname, '..', '..');
  return cachedRoot;
}

/** `${DATA_DIR:-<repo>/.data}`; a relative DATA_DIR is resolved against the repo root. */
export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.DATA_DIR ? path.resolve(projectRoot(), env.DATA_DIR) : path.join(projectRoot(), '.data');
}

/** `<data>/logs`: output of the embedded servers. */
export function logsDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(dataDir(env), 'logs');
}

/** `${PARTNER_PAYMENTS_CACHE:-~/.cache/partner-payments}`: tools built or fetched by setup. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.PARTNER_PAYMENTS_CACHE;
  return fromEnv ? path.resolve(fromEnv) : path.join(os.homedir(), '.cache', 'partner-payments');
}

/** io.temporal:temporal-test-server version pinned in tools/temporal-test-server/pom.xml. */
export function testServerVersion(): string {
  const pom = readFileSync(path.join(projectRoot(), 'tools', 'temporal-test-server', 'pom.xml'), 'utf8');
  const m = /<temporal\.test-server\.version>\s*([^<\s]+)\s*</.exec(pom);
  if (!m?.[1]) throw new Error('tools/temporal-test-server/pom.xml has no <temporal.test-server.version>');
  return m[1];
}

/**
 * Executable wrapper around Temporal's Java time-skipping test server (`<wrapper> <port>`), for
 * `TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } })`.
 */
export function testServerWrapperPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(cacheDir(env), `temporal-test-server-${testServerVersion()}`, 'temporal-test-server');
}

/** The Temporal CLI binary (`temporal server start-dev`). */
export function temporalCliPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(cacheDir(env), `temporal-cli-${TEMPORAL_CLI_VERSION}`, 'temporal');
}

/** The project-local PostgreSQL cluster (may be a symlink when set-up ran as root; see setup.mjs). */
export function postgresDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(dataDir(env), 'postgres');
}

/** `${PGPORT_LOCAL:-${EMBEDDED_POSTGRES_PORT:-54329}}` */
export function pgPortLocal(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.PGPORT_LOCAL || env.EMBEDDED_POSTGRES_PORT || DEFAULT_PGPORT_LOCAL;
  const port = Number(raw);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`PGPORT_LOCAL / EMBEDDED_POSTGRES_PORT is not a port: ${raw}`);
  return port;
}

/** Default SQLite file of the Temporal dev server. */
export function temporalDbFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(dataDir(env), 'temporal', 'temporal.db');
}

/** Throws a message pointing at `npm run setup` when a tool prepared by set-up is missing. */
export function requireTool(file: string, what: string, setupFor: 'start' | 'test'): string {
  if (!existsSync(file)) {
    throw new Error(`${what} not found at ${file}; run \`node scripts/setup.mjs --for ${setupFor}\` first`);
  }
  return file;
}

/**
 * Path of the time-skipping test server wrapper, checked to exist (else a message pointing at set-up):
 * `TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: testServerExecutable() } } })`.
 */
export function testServerExecutable(env: NodeJS.ProcessEnv = process.env): string {
  return requireTool(testServerWrapperPath(env), "Temporal's time-skipping test server", 'test');
}
