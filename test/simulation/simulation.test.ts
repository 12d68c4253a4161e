import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { SCENARIOS } from '../../simulate/plan';

const ROOT = path.resolve(__dirname, '../..');
const SEED = 7;
const PAYMENTS = SCENARIOS.length; // one of each scenario: the plan deals them out in shuffled rounds
const DEPOSITS = 2;

/**
 * `npm run simulate` in small, as its own process on its own stack (PostgreSQL cluster, Temporal dev
 * server, anvil, API and worker on free ports, data in .data/simulation-test): nothing is shared with
 * the suite's harness, and the faults (SIGSTOP on PostgreSQL and Temporal, kill -9 of the worker) hit
 * only the simulation's own processes.
 */
function simulate(args: string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: path.join(ROOT, '.data', 'simulation-test') };
  // Free ports for everything, whatever this shell set for `npm start` or the harness.
  for (const name of [
    'DATABASE_URL',
    'TEMPORAL_ADDRESS',
    'PORT',
    'EMBEDDED_POSTGRES_PORT',
    'EMBEDDED_TEMPORAL_PORT',
    'TEMPORAL_UI_PORT',
    'EMBEDDED_ANVIL_PORT',
    'PGPORT_LOCAL',
  ]) {
    delete env[name];
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'simulate/index.ts', ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    // SIGTERM lets it stop its stack; the test then fails on the exit code with the output so far.
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

// Started as the suite loads this file, so its minute and a half of real time (60 s expiries) runs
// beside the other tests instead of after them; the test below waits for it.
const run = simulate(['--seed', String(SEED), '--payments', String(PAYMENTS), '--deposits', String(DEPOSITS)], 300_000);
run.catch(() => undefined); // awaited (and reported) by the test; not an unhandled rejection meanwhile

describe('simulation', () => {
  it(
    `a seeded run (seed ${SEED}: ${PAYMENTS} Payments, one per scenario, ${DEPOSITS} deposits, a worker killed, a reorg, PostgreSQL and Temporal paused) ends with each as its scenario says and the books matching the chain`,
    { timeout: 360_000 },
    async () => {
      const { code, output } = await run;
      const tail = output.split('\n').slice(-40).join('\n');
      assert.match(output, new RegExp(`^simulate: seed ${SEED}, ${PAYMENTS} Payments`), 'the seed is printed first');
      assert.equal(code, 0, tail);
      const line = output.split('\n').find((l) => l.startsWith('summary: '));
      assert.ok(line, tail);
      const summary = JSON.parse(line.slice('summary: '.length));
      assert.deepEqual(summary.failures, []);
      assert.equal(summary.ok, true);
      // Each scenario ended where it should, as the partner reads it.
      assert.deepEqual(summary.paymentsByScenario, {
        exact: { succeeded: 1 },
        partial_complete: { succeeded: 1 },
        excess: { succeeded: 1 },
        duplicate: { succeeded: 1 },
        underpaid_expired: { expired: 1 },
        late: { expired: 1 },
        cancelled: { cancelled: 1 },
        expired_unpaid: { expired: 1 },
      });
      assert.equal(summary.incidents, 4); // excess, duplicate, underpaid_expired, late
      assert.equal(
        Object.values(summary.depositsByStatus as Record<string, number>).reduce((a, b) => a + b, 0),
        DEPOSITS,
      );
      // The faults really happened: the worker was killed and started again, the chain reorganised.
      assert.equal(summary.faults.worker_kill, 1);
      assert.equal(summary.faults.reorg, 1);
      assert.equal(summary.faults.postgres_pause, 1);
      assert.equal(summary.faults.temporal_pause, 1);
      assert.equal(summary.workerStarts, 2);
      assert.equal(summary.ledger.problems, 0);
      assert.equal(summary.reconcile.differences, 0);
      assert.deepEqual(summary.held, []);
    },
  );
});
