import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import path from 'node:path';
import { logsDir } from './paths';
import { reservePort } from './port-reservations';

/** Small helpers shared by the embedded servers: logged child processes, port and gRPC probes. */

export interface LoggedProcess {
  child: ChildProcess;
  /** File receiving the child's stdout and stderr (appended). */
  logFile: string;
  /** True once the child has exited (or failed to start). */
  exited(): boolean;
  /** Resolves when the child has exited. */
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface SpawnLoggedOptions {
  /** Log file name under `<data>/logs/` (e.g. `temporal.log`), or an absolute path. */
  log: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  uid?: number;
  gid?: number;
  /** Own process group, so the child survives Ctrl-C of the parent's terminal (default false). */
  detached?: boolean;
}

/** Spawns `command args` with stdout and stderr appended to a log file under `<data>/logs/`. */
export function spawnLogged(command: string, args: string[], options: SpawnLoggedOptions): LoggedProcess {
  const logFile = path.isAbsolute(options.log) ? options.log : path.join(logsDir(), options.log);
  mkdirSync(path.dirname(logFile), { recursive: true });
  const fd = openSync(logFile, 'a');
  writeSync(fd, `\n--- ${new Date().toISOString()} $ ${command} ${args.join(' ')}\n`);
  let child: ChildProcess;
  try {
    child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', fd, fd],
      detached: options.detached ?? false,
      ...(options.uid !== undefined ? { uid: options.uid, gid: options.gid } : {}),
    });
  } finally {
    closeSync(fd); // the child holds its own copy
  }
  let done = false;
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
    child.once('error', () => {
      if (child.pid === undefined) {
        done = true;
        resolve({ code: null, signal: null });
      }
    });
  });
  return { child, logFile, exited: () => done, exit };
}

/** Last `lines` lines of a log file (for error messages). */
export function tailFile(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Listens on host:port and closes again: the port, when it was free. */
function tryPort(host: string, port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(null));
    server.listen(port, host, () => {
      const { port: bound } = server.address() as net.AddressInfo;
      server.close(() => resolve(bound));
    });
  });
}

/** The first port of the kernel's ephemeral range (outgoing connections take their local ports there). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 2048 ? low : 32768;
  } catch {
    return 32768;
  }
}

/**
 * A TCP port free right now on host, for a server started a moment later. Drawn at random below the
 * kernel's ephemeral range: a port from that range (what listening on port 0 gives) can be taken in
 * between by any outgoing connection, which made embedded servers fail with "address in use". The
 * draw is reserved machine-wide, so no other process's `freePort` hands out the same number before
 * its server binds it.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const high = ephemeralLow() - 1;
  const low = Math.max(1024, high - 12_000);
  for (let attempt = 0; attempt < 50; attempt++) {
    const drawn = low + Math.floor(Math.random() * (high - low + 1));
    if (!reservePort(drawn)) continue;
    const port = await tryPort(host, drawn);
    if (port !== null) return port;
  }
  const any = await tryPort(host, 0);
  if (any === null) throw new Error(`no free port on ${host}`);
  return any;
}

/**
 * SIGKILLs `child` if this process exits first: a detached child is in a process group of its own,
 * which no signal to ours reaches, and must not outlive us holding its ports. Answers that kill.
 */
export function killWithParent(child: ChildProcess): () => void {
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', kill);
  child.once('exit', () => process.removeListener('exit', kill));
  return kill;
}

/** Whether something accepts TCP connections on host:port right now. */
export function isPortOpen(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Stop waiting early (with an error) when this returns false, e.g. the process died. */
  isAlive?: () => boolean;
  what?: string;
}

/** Polls `check` until it returns true; throws after `timeoutMs` (default 60s). */
export async function waitFor(check: () => Promise<boolean>, options: WaitOptions = {}): Promise<number> {
  const start = Date.now();
  const timeoutMs = options.timeoutMs ?? 60_000;
  for (;;) {
    if (await check()) return Date.now() - start;
    if (options.isAlive && !options.isAlive()) throw new Error(`${options.what ?? 'process'} exited before it was ready`);
    if (Date.now() - start > timeoutMs) throw new Error(`${options.what ?? 'process'} not ready after ${timeoutMs} ms`);
    await sleep(options.intervalMs ?? 100);
  }
}

/** Waits until host:port accepts TCP connections. Resolves with the time waited (ms). */
export function waitForPort(port: number, options: WaitOptions & { host?: string } = {}): Promise<number> {
  return waitFor(() => isPortOpen(port, options.host), { what: `port ${port}`, ...options });
}

export interface GrpcResult {
  ok: boolean;
  /** grpc-status of the answer (0 = OK), when there was one. */
  status?: number;
  error?: string;
}

/**
 * One unary gRPC call over plain HTTP/2, with a hand-serialized protobuf body. Used as a readiness
 * probe: it needs no generated code and no client library.
 */
export function grpcCall(
  port: number,
  method: string,
  body: Buffer = Buffer.alloc(0),
  timeoutMs = 3000,
  host = '127.0.0.1',
): Promise<GrpcResult> {
  return new Promise((resolve) => {
    let settled = false;
    const client = http2.connect(`http://${host}:${port}`);
    const timer = setTimeout(() => done({ ok: false, error: 'timeout' }), timeoutMs);
    function done(result: GrpcResult) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.destroy();
      resolve(result);
    }
    client.on('error', (err) => done({ ok: false, error: err.message }));
    const req = client.request({ ':method': 'POST', ':path': method, 'content-type': 'application/grpc', te: 'trailers' });
    let status: number | undefined;
    const readStatus = (headers: http2.IncomingHttpHeaders) => {
      const value = headers['grpc-status'];
      if (value !== undefined) status = Number(value);
    };
    req.on('response', readStatus);
    req.on('trailers', readStatus);
    req.on('data', () => undefined);
    req.on('end', () => done({ ok: status === 0, status }));
    req.on('error', (err) => done({ ok: false, error: err.message }));
    const frame = Buffer.alloc(5 + body.length);
    frame.writeUInt32BE(body.length, 1);
    body.copy(frame, 5);
    req.end(frame);
  });
}

/** protobuf: a length-delimited field (string, bytes or sub-message). */
export function protoField(field: number, value: string | Buffer): Buffer {
  const buf = Buffer.isBuffer(value) ? value : Buffer.from(value, 'utf8');
  const varint: number[] = [];
  let n = buf.length;
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    varint.push(byte);
  } while (n);
  return Buffer.concat([Buffer.from([(field << 3) | 2, ...varint]), buf]);
}

export const WORKFLOW_SERVICE = '/temporal.api.workflowservice.v1.WorkflowService';

/** True when a Temporal frontend on `port` answers DescribeNamespace(namespace) with OK. */
export async function temporalNamespaceReady(port: number, namespace = 'default', host = '127.0.0.1'): Promise<boolean> {
  const r = await grpcCall(port, `${WORKFLOW_SERVICE}/DescribeNamespace`, protoField(1, namespace), 3000, host);
  return r.ok;
}

/**
 * Stops a child: `signal` (default SIGTERM), then SIGKILL after `timeoutMs` (default 20s). Resolves
 * once it has exited. Safe to call twice.
 */
export async function stopProcess(proc: LoggedProcess, options: { signal?: NodeJS.Signals; timeoutMs?: number } = {}): Promise<void> {
  if (proc.exited()) return;
  proc.child.kill(options.signal ?? 'SIGTERM');
  const timer = setTimeout(() => {
    if (!proc.exited()) proc.child.kill('SIGKILL');
  }, options.timeoutMs ?? 20_000);
  try {
    await proc.exit;
  } finally {
    clearTimeout(timer);
  }
}
