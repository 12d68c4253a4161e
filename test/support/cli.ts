import assert from 'node:assert/strict';
import { runCli as runCommand } from '../../src/cli';
import { getHarness, TEST_SERVICE_SECRET } from './harness';

export interface CliOutput {
  stdout: string;
  stderr: string;
}

/** A command that exited non-zero, shaped like execFile's rejection (code, stdout, stderr). */
export class CliExit extends Error {
  constructor(
    readonly code: number,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(`cli exited ${code}: ${stderr.trim()}`);
  }
}

/**
 * Runs an operator command (`npm run cli -- <args>`) in this process, against the harness's database,
 * Temporal, chain and service secret, with its own stdout and stderr. Starting the real binary costs
 * seconds a call; test/api/cli.test.ts still starts it, to prove the entry point.
 */
export async function runCli(args: string[], env: Record<string, string> = {}): Promise<CliOutput> {
  const h = await getHarness();
  let stdout = '';
  let stderr = '';
  const code = await runCommand(args, {
    env: {
      ...process.env,
      DEPLOYMENT: 'sandbox',
      DATABASE_URL: h.databaseUrl,
      TEMPORAL_ADDRESS: h.env.address,
      TEMPORAL_TASK_QUEUE: h.taskQueue,
      EMBEDDED_ANVIL_PORT: new URL(h.rpcUrl).port,
      SERVICE_SECRET: TEST_SERVICE_SECRET,
      LOG_LEVEL: 'silent',
      ...env,
    },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  if (code !== 0) throw new CliExit(code, stdout, stderr);
  return { stdout, stderr };
}

/** runCli, answering the command's one JSON line. */
export async function cli(args: string[], env: Record<string, string> = {}): Promise<any> {
  const { stdout } = await runCli(args, env);
  const lines = stdout.trim().split('\n');
  assert.equal(lines.length, 1, stdout);
  return JSON.parse(lines[0]!);
}
