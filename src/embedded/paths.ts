import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { toolchain } from '../config/toolchain';
import { projectRoot } from '../platform/project-root';

/**
 * Where the embedded servers and the tools prepared by `scripts/setup.mjs` live. Mirrors the path
 * functions of scripts/setup/util.mjs (plain ESM that runs before node_modules exists, so it can't be
 * imported here); versions and default ports come from config/toolchain.json for both.
 */

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

/**
 * Executable wrapper around Temporal's Java time-skipping test server (`<wrapper> <port>`), for
 * `TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } })`.
 * Its folder is named by the version and a hash of tools/temporal-test-server/pom.xml, as set-up names it.
 */
export function testServerWrapperPath(env: NodeJS.ProcessEnv = process.env): string {
  const pom = readFileSync(path.join(projectRoot(), 'tools', 'temporal-test-server', 'pom.xml'));
  const key = createHash('sha256').update(pom).digest('hex').slice(0, 8);
  return path.join(cacheDir(env), `temporal-test-server-${toolchain.temporalTestServer.version}-${key}`, 'temporal-test-server');
}

/** The Temporal CLI binary (`temporal server start-dev`). */
export function temporalCliPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(cacheDir(env), `temporal-cli-${toolchain.temporalCli.version}`, 'temporal');
}

/** `<cache>/temporal-server-<version>/`: Temporal Server (`server`), its SQL schema tool (`sql`) and schemas (`schema/`). */
export function temporalServerDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(cacheDir(env), `temporal-server-${toolchain.temporalServer.version}`);
}

/** The project-local PostgreSQL cluster (may be a symlink when set-up ran as root; see setup.mjs). */
export function postgresDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(dataDir(env), 'postgres');
}

/** `${PGPORT_LOCAL:-${EMBEDDED_POSTGRES_PORT:-<config/toolchain.json ports.postgres>}}` */
export function pgPortLocal(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.PGPORT_LOCAL || env.EMBEDDED_POSTGRES_PORT || toolchain.ports.postgres;
  const port = Number(raw);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`PGPORT_LOCAL / EMBEDDED_POSTGRES_PORT is not a port: ${raw}`);
  return port;
}

/** Default SQLite file of the Temporal dev server. */
export function temporalDbFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(dataDir(env), 'temporal', 'temporal.db');
}

/** Throws a message pointing at `npm run setup` when a tool prepared by set-up is missing. */
export function requireTool(file: string, what: string, setupFor: 'start' | 'test' | 'cluster'): string {
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
