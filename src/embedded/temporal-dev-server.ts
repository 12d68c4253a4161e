import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { toolchain } from '../config/toolchain';
import { requireTool, temporalCliPath, temporalDbFile } from './paths';
import { isPortOpen, killWithParent, spawnLogged, stopProcess, tailFile, temporalNamespaceReady, waitFor } from './process';

/**
 * The Temporal CLI's dev server (`temporal server start-dev`, built by `scripts/setup.mjs`), persistent
 * in a SQLite file with WAL journaling, with the Web UI. When a Temporal server already answers on the
 * port (say `npm start` is running), it is reused and `stop()` leaves it running.
 */

export interface TemporalDevServerOptions {
  /** Front-end gRPC port (default config/toolchain.json ports.temporal). */
  port?: number;
  /** Web UI port (default port + 1000). */
  uiPort?: number;
  /** SQLite file (default `<data>/temporal/temporal.db`); `null` keeps everything in memory. */
  dbFile?: string | null;
  ip?: string;
  /** Namespaces to create at launch; `default` always exists. */
  namespaces?: string[];
  /** No Web UI. */
  headless?: boolean;
  /** How long to wait for the namespaces to answer (default 60s). */
  startTimeoutMs?: number;
  /** The server's own log level: debug, info, warn (default), error. */
  logLevel?: string;
  /** More `start-dev` flags, e.g. ['--dynamic-config-value', 'KEY=VALUE']. */
  extraArgs?: string[];
}

export interface TemporalDevServer {
  /** `127.0.0.1:7233`, for Connection.connect / NativeConnection.connect. */
  address: string;
  /** `http://127.0.0.1:8233`, or undefined when headless. */
  uiUrl: string | undefined;
  /** True when this call started the server; only then does `stop()` stop it. */
  started: boolean;
  logFile: string | undefined;
  /** The server's process id when this call started it (the simulation pauses it with SIGSTOP). */
  pid: number | undefined;
  /** SIGTERM, then waits for the exit (SIGKILL after 20s). Safe to call twice. */
  stop(): Promise<void>;
  /** SIGKILL, at once (a forced stop). */
  kill(): void;
}

export async function startTemporalDevServer(options: TemporalDevServerOptions = {}): Promise<TemporalDevServer> {
  const ip = options.ip ?? '127.0.0.1';
  const port = options.port ?? toolchain.ports.temporal;
  const uiPort = options.uiPort ?? port + 1000;
  const address = `${ip}:${port}`;
  const uiUrl = options.headless ? undefined : `http://${ip}:${uiPort}`;
  const namespaces = ['default', ...(options.namespaces ?? []).filter((n) => n !== 'default')];
  const allReady = async () => {
    for (const ns of namespaces) if (!(await temporalNamespaceReady(port, ns, ip))) return false;
    return true;
  };

  if (await isPortOpen(port, ip)) {
    if (await temporalNamespaceReady(port, 'default', ip)) {
      if (!(await allReady())) {
        throw new Error(`a Temporal server already runs on ${address} but lacks namespaces ${namespaces.join(', ')}`);
      }
      return { address, uiUrl, started: false, logFile: undefined, pid: undefined, stop: async () => undefined, kill: () => undefined };
    }
    throw new Error(`port ${port} on ${ip} is in use by something that is not a Temporal server`);
  }

  const cli = requireTool(temporalCliPath(), 'the Temporal CLI', 'start');
  const args = ['server', 'start-dev', '--ip', ip, '--port', String(port), '--log-level', options.logLevel ?? 'warn'];
  if (options.headless) args.push('--headless');
  else args.push('--ui-port', String(uiPort));
  for (const ns of namespaces) args.push('--namespace', ns);
  const dbFile = options.dbFile === undefined ? temporalDbFile() : options.dbFile;
  if (dbFile) {
    mkdirSync(path.dirname(dbFile), { recursive: true });
    args.push('--db-filename', dbFile, '--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal');
  }
  args.push(...(options.extraArgs ?? []));

  // Its own process group, so a Ctrl-C reaches only our process, which stops the server after the
  // worker has drained; a parent that exits without stopping it still takes it down.
  const proc = spawnLogged(cli, args, { log: 'temporal.log', detached: true });
  const kill = killWithParent(proc.child);
  try {
    await waitFor(allReady, {
      timeoutMs: options.startTimeoutMs ?? 60_000,
      intervalMs: 200,
      isAlive: () => !proc.exited(),
      what: `Temporal dev server on ${address}`,
    });
  } catch (err) {
    await stopProcess(proc, { timeoutMs: 5000 });
    throw new Error(`${(err as Error).message}; last lines of ${proc.logFile}:\n${tailFile(proc.logFile)}`);
  }

  return {
    address,
    uiUrl,
    started: true,
    logFile: proc.logFile,
    pid: proc.child.pid,
    stop: () => stopProcess(proc),
    kill,
  };
}
