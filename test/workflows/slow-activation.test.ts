import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { testServerExecutable } from '../../src/embedded/paths';
import { bundleWorkflows, createWorker } from '../../src/temporal/worker';
import { awaitWorkflowResult } from '../support/workflow-result';

// Under the SDK's default 5 s limit the activation was stopped as a deadlock on every attempt, so the
// workflow never finished; in the production rehearsal the same stop, on a loaded machine, also
// aborted whole workers ("async hook stack has become corrupted").
test(
  'a workflow activation that holds its thread for 6 s of wall time finishes, and the worker lives on',
  { timeout: 180_000 },
  async () => {
    const env = await TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path: testServerExecutable() } },
    });
    try {
      const taskQueue = 'slow-activation';
      const worker = await createWorker({
        connection: env.nativeConnection,
        namespace: env.namespace ?? 'default',
        taskQueue,
        activities: {},
        workflowBundle: await bundleWorkflows(path.join(__dirname, 'fixtures/slow-activation.ts')),
      });
      await worker.runUntil(async () => {
        const slow = await env.client.workflow.start('slowActivation', { taskQueue, workflowId: `slow-${Date.now()}`, args: [6_000] });
        assert.equal(await awaitWorkflowResult({ env }, slow.workflowId, { timeoutMs: 60_000 }), 'finished');
        const next = await env.client.workflow.start('slowActivation', { taskQueue, workflowId: `quick-${Date.now()}`, args: [0] });
        assert.equal(await awaitWorkflowResult({ env }, next.workflowId), 'finished', 'the same worker still runs workflows');
      });
    } finally {
      await env.teardown();
    }
  },
);
