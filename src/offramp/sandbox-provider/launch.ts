import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { SANDBOX_TOKEN_ADDRESS } from '../../chain/sandbox';
import { projectRoot } from '../../platform/project-root';
import { READY_PREFIX } from './contract';

/**
 * Starts the sandbox provider as its own process (`node --import tsx main.ts`, well under a second)
 * and waits for its ready line. Used by `npm start` (src/runtime/service.ts) and the test harness.
 */
export interface SandboxProviderLaunch {
  port: number;
  host?: string;
  dataDir: string;
  rpcUrl: string;
  chainId: number;
  /** The stablecoin it takes (default: the sandbox's TestUSD). */
  tokenAddress?: string;
  callbackUrl?: string;
  callbackSecret: string;
  /** Extra SANDBOX_PROVIDER_* settings (delays, TTLs) for tests. */
  env?: Record<string, string>;
  /** Appends the process's output here; dropped when unset. */
  logFile?: string;
  startTimeoutMs?: number;
}

export interface SandboxProviderProcess {
  url: string;
  /** The provider's own address: every quote's deposit address. */
  address: string;
  stop(): Promise<void>;
  kill(): void;
}

export async function launchSandboxProvider(opts: SandboxProviderLaunch): Promise<SandboxProviderProcess> {
  mkdirSync(opts.dataDir, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    // Not the service's environment (its secrets): only what node needs.
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TMPDIR: process.env.TMPDIR,
    ...opts.env,
    SANDBOX_PROVIDER_PORT: String(opts.port),
    SANDBOX_PROVIDER_HOST: opts.host ?? '127.0.0.1',
    SANDBOX_PROVIDER_DATA_DIR: opts.dataDir,
    SANDBOX_PROVIDER_RPC_URL: opts.rpcUrl,
    SANDBOX_PROVIDER_CHAIN_ID: String(opts.chainId),
    SANDBOX_PROVIDER_TOKEN_ADDRESS: opts.tokenAddress ?? SANDBOX_TOKEN_ADDRESS,
    OFFRAMP_CALLBACK_SECRET: opts.callbackSecret,
    ...(opts.callbackUrl ? { SANDBOX_PROVIDER_CALLBACK_URL: opts.callbackUrl } : {}),
  };
  // From src/ through tsx; in a build without sources, the compiled main.js (paths from the project root).
  const source = path.join(projectRoot(), 'src', 'offramp', 'sandbox-provider', 'main.ts');
  const args = existsSync(source)
    ? ['--import', 'tsx', source]
    : [path.join(projectRoot(), 'dist', 'src', 'offramp', 'sandbox-provider', 'main.js')];
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  let log: ReturnType<typeof createWriteStream> | undefined;
  if (opts.logFile) {
    mkdirSync(path.dirname(opts.logFile), { recursive: true });
    log = createWriteStream(opts.logFile, { flags: 'a' });
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const recent: string[] = [];
  try {
    const ready = await new Promise<{ url: string; address: string }>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`sandbox provider did not start\n${recent.join('\n')}`)),
        opts.startTimeoutMs ?? 20_000,
      );
      let buffered = '';
      const onData = (chunk: Buffer): void => {
        log?.write(chunk);
        buffered += chunk.toString('utf8');
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          recent.push(line);
          if (recent.length > 20) recent.shift();
          if (line.startsWith(READY_PREFIX)) {
            clearTimeout(timer);
            resolve(JSON.parse(line.slice(READY_PREFIX.length)) as { url: string; address: string });
          }
        }
      };
      // Both pipes are drained for the process's whole life, or it would block on a full pipe.
      child.stdout.on('data', onData);
      child.stderr.on('data', (chunk: Buffer) => {
        log?.write(chunk);
        recent.push(chunk.toString('utf8').trimEnd());
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`sandbox provider exited before it was ready\n${recent.join('\n')}`));
      });
    });
    // Gas for its refunds: the sandbox chain is anvil, which sets a balance outright.
    await setGasBalance(opts.rpcUrl, ready.address, 10n ** 19n);
    let stopping: Promise<void> | undefined;
    return {
      ...ready,
      stop: () =>
        (stopping ??= (async () => {
          if (child.exitCode === null && child.signalCode === null) {
            child.kill('SIGTERM');
            const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
            await exited;
            clearTimeout(timer);
          }
          process.removeListener('exit', killOnExit);
          log?.end();
        })()),
      kill: killOnExit,
    };
  } catch (err) {
    child.kill('SIGKILL');
    process.removeListener('exit', killOnExit);
    log?.end();
    throw err;
  }
}

async function setGasBalance(rpcUrl: string, address: string, wei: bigint): Promise<void> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_setBalance', params: [address, `0x${wei.toString(16)}`] }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await res.json()) as { error?: { message: string } };
  if (body.error) throw new Error(`anvil_setBalance: ${body.error.message}`);
}
