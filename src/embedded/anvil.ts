import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { ANVIL_CHAIN_ID } from '../chain/sandbox';

/**
 * A local anvil node (the real Foundry binary shipped inside an npm platform package), for tests and
 * `npm start`. It automines by default, so every transaction gets its own block at once; tests reach a
 * confirmation depth with `anvil_mine`.
 */
export interface AnvilOptions {
  /** 0 (the default) lets the OS pick a free port; the real one is read from anvil's own output. */
  port?: number;
  host?: string;
  chainId?: number;
  /** Loads this file at start and dumps the chain into it on stop (and every `stateIntervalSeconds`). */
  stateFile?: string;
  /** Periodic dumps bound what a crash (no clean stop) loses. Only with `stateFile`. */
  stateIntervalSeconds?: number;
  /** Seconds between blocks (interval mining). Unset means automine: one block per transaction. */
  blockTime?: number;
  startTimeoutMs?: number;
  /** Receives anvil's output lines (it logs every RPC call); dropped when unset. */
  onLog?: (line: string) => void;
}

export interface AnvilNode {
  rpcUrl: string;
  port: number;
  chainId: number;
  /** Stops the node; with a state file, anvil writes the state before it exits. Safe to call twice. */
  stop(): Promise<void>;
  /** SIGKILL, at once (a forced stop). */
  kill(): void;
}

export const DEFAULT_CHAIN_ID = ANVIL_CHAIN_ID;

/** Path of the anvil binary for this platform, found through Node's resolution (hoisting-proof). */
export function anvilBinaryPath(): string {
  const arch = ({ x64: 'amd64', arm64: 'arm64' } as Record<string, string>)[process.arch];
  if (!arch || !['linux', 'darwin', 'win32'].includes(process.platform)) {
    throw new Error(`anvil has no npm build for ${process.platform}/${process.arch}`);
  }
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  let manifest: string;
  try {
    manifest = require.resolve(`${pkg}/package.json`);
  } catch {
    throw new Error(`${pkg} is not installed (it is an optional dependency of @foundry-rs/anvil)`);
  }
  return path.join(path.dirname(manifest), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
}

/** Blocks whose state anvil keeps (in memory): the deepest reorg it can make. */
export const STATE_HISTORY = 256;

export async function startAnvil(options: AnvilOptions = {}): Promise<AnvilNode> {
  const host = options.host ?? '127.0.0.1';
  const chainId = options.chainId ?? DEFAULT_CHAIN_ID;
  // anvil moves older per-block states out of memory to disk without their contracts' code: a reorg
  // that lands on such a state (a shallow one, once the chain is about a thousand blocks long) leaves
  // every contract, the token first, without code. Kept in memory only, the last STATE_HISTORY
  // blocks, deeper than any reorg the sandbox or the tests make.
  const args = [
    '--host',
    host,
    '--port',
    String(options.port ?? 0),
    '--chain-id',
    String(chainId),
    '--prune-history',
    String(STATE_HISTORY),
  ];
  if (options.stateFile) {
    mkdirSync(path.dirname(options.stateFile), { recursive: true });
    args.push('--state', options.stateFile, '--state-interval', String(options.stateIntervalSeconds ?? 5));
  }
  if (options.blockTime !== undefined) args.push('--block-time', String(options.blockTime));

  // Its own process group: a Ctrl-C in the terminal reaches only our process, which stops the node
  // after the worker has drained (see src/runtime/lifecycle.ts).
  const child = spawn(anvilBinaryPath(), args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  // A crashed or killed parent must not leave an orphan node holding the port.
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);

  const recent: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  try {
    const port = await waitForListening(child, recent, options, exited);
    const rpcUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    await waitForRpc(rpcUrl, chainId, options.startTimeoutMs ?? 20_000);
    let stopping: Promise<void> | undefined;
    return {
      rpcUrl,
      port,
      chainId,
      stop: () => (stopping ??= stop(child, exited).finally(() => process.removeListener('exit', killOnExit))),
      kill: killOnExit,
    };
  } catch (err) {
    child.kill('SIGKILL');
    process.removeListener('exit', killOnExit);
    throw err;
  }
}

// Waiting for anvil's own "Listening on" line (rather than polling the port) proves the answering
// node is ours, not another process already on that port, and tells us which port 0 became.
function waitForListening(child: ChildProcess, recent: string[], options: AnvilOptions, exited: Promise<number | null>): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`anvil did not start within ${options.startTimeoutMs ?? 20_000} ms\n${recent.join('\n')}`)),
      options.startTimeoutMs ?? 20_000,
    );
    const onLine = (line: string): void => {
      recent.push(line);
      if (recent.length > 40) recent.shift();
      options.onLog?.(line);
      const match = /Listening on .*:(\d+)\s*$/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    // Both streams must be drained for the whole life of the node, or anvil blocks on a full pipe.
    readLines(child.stdout, onLine);
    readLines(child.stderr, onLine);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`anvil exited with code ${code} before listening\n${recent.join('\n')}`));
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

function readLines(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): void {
  let buffered = '';
  stream?.setEncoding('utf8');
  stream?.on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) onLine(line);
  });
}

async function waitForRpc(rpcUrl: string, chainId: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      });
      const body = (await res.json()) as { result?: string };
      if (body.result !== undefined) {
        if (Number(body.result) !== chainId) throw new Error(`anvil at ${rpcUrl} reports chain ${body.result}`);
        return;
      }
    } catch (err) {
      if (err instanceof Error && err.message.includes('reports chain')) throw err;
    }
    if (Date.now() > deadline) throw new Error(`anvil at ${rpcUrl} did not answer JSON-RPC`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// SIGTERM lets anvil dump its state file; SIGKILL only if it hangs.
async function stop(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
