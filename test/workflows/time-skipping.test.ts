import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { testServerExecutable } from '../../src/embedded/paths';
import { bundleWorkflows } from '../../src/temporal/worker';
import { awaitWorkflowResult } from '../support/workflow-result';
import { runsEndedWithWorkOut } from '../support/engine-clock';

// A time-skipping server of its own: the suite's shared one carries every earlier test's workflows
// and timers, and what it skips through is not what this test proves.
test('a workflow that sleeps through a 24-hour timer finishes in seconds of wall time, not hours', { timeout: 180_000 }, async () => {
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: testServerExecutable() } },
  });
  try {
    const bundle = await bundleWorkflows(path.join(__dirname, 'fixtures/sleeper.ts'));
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: 'time-skipping-proof',
      workflowBundle: bundle,
    });
    await worker.runUntil(async () => {
      const started = Date.now();
      const handle = await env.client.workflow.start('sleeper', {
        taskQueue: 'time-skipping-proof',
        workflowId: `sleeper-${Date.now()}`,
        args: [24 * 60 * 60 * 1000],
      });
      const result = await awaitWorkflowResult<{ sleptMs: number }>({ env }, handle.workflowId);
      const wallMs = Date.now() - started;
      assert.ok(result.sleptMs >= 24 * 60 * 60 * 1000, `workflow time advanced ${result.sleptMs}ms`);
      // Proof of time skipping, not a benchmark: without it this test would take 24 hours. The bound is
      // loose on purpose (a loaded CI machine); the measured figure is printed.
      console.log(`# 24h workflow timer: ${wallMs} ms of wall time`);
      assert.ok(wallMs < 60_000, `took ${wallMs}ms of wall time`);
    });
  } finally {
    await env.teardown();
  }
});

/**
 * Asks the server to skip `serverMs`; answers whether it did within `deadlineMs` of real time (it
 * can't while the clock is locked), and the sleep itself, to be awaited before teardown.
 */
async function skips(
  env: TestWorkflowEnvironment,
  serverMs: number,
  deadlineMs: number,
): Promise<{ skipped: boolean; sleep: Promise<void> }> {
  let timer: NodeJS.Timeout | undefined;
  const sleep = env.sleep(serverMs);
  try {
    const skipped = await Promise.race([
      sleep.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), deadlineMs))),
    ]);
    return { skipped, sleep };
  } finally {
    clearTimeout(timer);
  }
}

// Why every file's end reads the runs it ended (test/support/engine-clock.ts): a run that ends with an
// activity out keeps that activity's lock on the clock for ever, and nothing later skips time.
test(
  'a run terminated while its activity runs locks the clock for good, and the file-end check names it',
  { timeout: 180_000 },
  async () => {
    const env = await TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path: testServerExecutable() } },
    });
    try {
      let release!: () => void;
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      const worker = await Worker.create({
        connection: env.nativeConnection,
        taskQueue: 'clock-lock-proof',
        workflowBundle: await bundleWorkflows(path.join(__dirname, 'fixtures/sleeper.ts')),
        activities: { hold: () => (started(), released) },
      });
      await worker.runUntil(async () => {
        assert.equal((await skips(env, 60_000, 5_000)).skipped, true, 'a minute of server time skips at first');
        const workflowId = `holder-${Date.now()}`;
        const handle = await env.client.workflow.start('holder', { taskQueue: 'clock-lock-proof', workflowId });
        await running;
        await handle.terminate('test: ended with its activity out');
        release();
        const locked = await skips(env, 60_000, 5_000);
        assert.equal(locked.skipped, false, 'after it, a minute of server time takes a minute');
        const named = await runsEndedWithWorkOut(env);
        assert.equal(named.length, 1, named.join('; '));
        assert.match(named[0]!, new RegExp(`^holder ${workflowId} run .*: 1 task\\(s\\) out when it ended`));
        // Giving back the one leaked lock (as terminateAtRest does) lets the waiting sleep skip at once.
        await env.connection.testService!.unlockTimeSkipping({});
        await locked.sleep;
      });
    } finally {
      await env.teardown();
    }
  },
);
