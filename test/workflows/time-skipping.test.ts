import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { testServerExecutable } from '../../src/embedded/paths';
import { bundleWorkflows } from '../../src/temporal/worker';
import { awaitWorkflowResult } from '../support/workflow-result';

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
