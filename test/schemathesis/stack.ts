import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../src/embedded/process';
import { NPM_START_PORT_VARS } from '../support/npm-start';

const ROOT = path.resolve(__dirname, '../..');
const READY_LINE = 'Press Ctrl-C to stop.';

export interface Stack {
  apiUrl: string;
  /** The environment the service runs with: the CLI needs the same DATA_DIR and ports. */
  env: NodeJS.ProcessEnv;
  /** Stops the service and its embedded children; safe to call twice. */
  stop(): Promise<void>;
}

/**
 * `npm start` as a user runs it (its embedded PostgreSQL, Temporal dev server, anvil and sandbox
 * provider), on free ports with its data in a folder of its own, emptied first so that a seeded run
 * meets the same state. It runs in a process group of its own, which stop() signals.
 */
export async function startStack(opts: { dataDir: string; readyWithinMs: number; log: (line: string) => void }): Promise<Stack> {
  rmSync(opts.dataDir, { recursive: true, force: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: opts.dataDir,
    LOG_LEVEL: 'warn',
    // The run is thousands of requests from one app and one address, many with wrong credentials or
    // unknown apps: the quotas would answer most of them 429.
    RATE_LIMIT_POINTS: '1000000',
    CLIENT_RATE_LIMIT_POINTS: '1000000',
    LOGIN_FAILURE_LIMIT_POINTS: '1000000',
    PUBLIC_RATE_LIMIT_POINTS: '1000000',
  };
  for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'PGPORT_LOCAL', 'PUBLIC_BASE_URL']) delete env[name];
  for (const name of NPM_START_PORT_VARS) env[name] = String(await freePort());
  const child = spawn('npm', ['start'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => (output += chunk.toString('utf8'));
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stack: Stack = { apiUrl: `http://127.0.0.1:${env.PORT}`, env, stop: onceOnly(() => stopGroup(child, exited, opts.log)) };
  try {
    await waitForLine(child, () => output, opts.readyWithinMs);
  } catch (err) {
    await stack.stop();
    throw err;
  }
  child.stdout!.off('data', collect);
  child.stdout!.on('data', (chunk: Buffer) => opts.log(`service: ${chunk.toString('utf8').trimEnd()}`));
  return stack;
}

async function waitForLine(child: ChildProcess, output: () => string, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!output().includes(READY_LINE)) {
    if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode}) before it was ready:\n${output()}`);
    if (Date.now() > deadline) throw new Error(`npm start not ready within ${withinMs / 1000} s:\n${output()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function onceOnly(fn: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= fn());
}

/**
 * SIGINT to the group is Ctrl-C: the service stops its embedded children, which run in process
 * groups of their own. A second SIGINT (the service's "kill what is left") follows when the first
 * has not finished in time, and SIGKILL of the group last.
 */
async function stopGroup(child: ChildProcess, exited: Promise<void>, log: (line: string) => void): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, s);
    } catch {
      /* the group is gone */
    }
  };
  const within = (ms: number) => Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
  signal('SIGINT');
  if (await within(60_000)) return;
  log('service: still stopping after 60 s; a second SIGINT kills what is left');
  signal('SIGINT');
  if (await within(15_000)) return;
  log('service: killed (SIGKILL to its process group)');
  signal('SIGKILL');
  await within(5_000);
}
