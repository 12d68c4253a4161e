import { spawn } from 'node:child_process';
import path from 'node:path';
import { freePort, isPortOpen } from '../../src/embedded/process';

const ROOT = path.resolve(__dirname, '../..');
/** Every port `npm start` listens on: each gets a free one, so another `npm start` is never disturbed. */
export const NPM_START_PORT_VARS = [
  'EMBEDDED_POSTGRES_PORT',
  'EMBEDDED_TEMPORAL_PORT',
  'TEMPORAL_UI_PORT',
  'EMBEDDED_ANVIL_PORT',
  'SANDBOX_PROVIDER_PORT',
  'PORT',
  'ADMIN_PORT',
] as const;

export interface NpmStart {
  child: ReturnType<typeof spawn>;
  ports: number[];
  apiUrl: string;
  adminUrl: string;
  /** The environment it runs with (its data directory and ports): a CLI run with it reaches its stack. */
  env: NodeJS.ProcessEnv;
  output: () => string;
  exit: Promise<number | null>;
}

/**
 * `npm start` as a user runs it, on its own stack (free ports, data in `dataDir`), in its own process
 * group: signalling the group is what Ctrl-C in a terminal does. Resolves once it says it is ready.
 */
export async function npmStart(dataDir: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<NpmStart> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...extraEnv };
  for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'PGPORT_LOCAL']) delete env[name];
  const ports: number[] = [];
  for (const name of NPM_START_PORT_VARS) {
    const port = await freePort();
    env[name] = String(port);
    ports.push(port);
  }
  const child = spawn('npm', ['start'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 180_000;
  while (!output.includes('Press Ctrl-C to stop.')) {
    if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode}) before it was ready:\n${output}`);
    if (Date.now() > deadline) {
      process.kill(-child.pid!, 'SIGKILL');
      throw new Error(`npm start not ready after 180 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    child,
    ports,
    apiUrl: `http://127.0.0.1:${env.PORT}`,
    adminUrl: `http://127.0.0.1:${env.ADMIN_PORT}`,
    env,
    output: () => output,
    exit,
  };
}

/** Its exit code, or after `ms` a SIGKILL of its whole group (then null). */
export async function exitWithin(started: NpmStart, ms: number): Promise<number | null> {
  const timer = setTimeout(() => process.kill(-started.child.pid!, 'SIGKILL'), ms);
  try {
    return await started.exit;
  } finally {
    clearTimeout(timer);
  }
}

export async function openPorts(ports: number[]): Promise<number[]> {
  const open: number[] = [];
  for (const port of ports) if (await isPortOpen(port)) open.push(port);
  return open;
}
