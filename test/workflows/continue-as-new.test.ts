import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultPayloadConverter } from '@temporalio/common';
import { getHarness } from '../support/harness';
import { nominateForRecording } from '../support/record-histories';
import { until } from '../support/until';
import { describeWorkflow } from '../support/diagnose';
import type { ChainScannerInput } from '../../workflows/contracts/chain-scanner';
import type { DispatchSummary, WebhookDispatcherInput } from '../../workflows/contracts/webhooks';

/**
 * The long-running workflows bound their runs by continuing as new. Each test runs a second one beside
 * the suite's own (another id, the same task queue and worker), drives it across its bound, checks the
 * next run carries on from where the last stopped, and ends it. The run that continued is nominated
 * for RECORD_WORKFLOW_HISTORIES, so the recorded histories hold a continue-as-new of each.
 */

async function inputOfRun<T>(workflowId: string, runId: string): Promise<T> {
  const h = await getHarness();
  const history = await h.env.client.workflow.getHandle(workflowId, runId).fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  assert.ok(payload, `the first event of ${workflowId} run ${runId} holds its input`);
  return defaultPayloadConverter.fromPayload<T>(payload);
}

/**
 * Waits until the workflow is in a run other than firstRunId; answers that run's id. Nothing signals
 * it meanwhile: a signal that lands while a run completes with continue-as-new fails that workflow
 * task (the run must see the signal first), so a stream of them would keep it from ever continuing.
 */
async function untilContinued(workflowId: string, firstRunId: string): Promise<string> {
  const h = await getHarness();
  try {
    return await until(
      async () => {
        const { runId } = await h.env.client.workflow.getHandle(workflowId).describe();
        return runId !== firstRunId ? runId : undefined;
      },
      `${workflowId} to continue as new`,
      60_000,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}: ${await describeWorkflow(h, workflowId)}`, { cause: err });
  }
}

describe('Continue-as-new of the long-running workflows', () => {
  test('the chain scanner continues as new after scansPerRun scans, carrying its cursor and block checkpoints', async () => {
    const h = await getHarness();
    const head = await h.chain.chains.get(h.chainId).getBlockNumber();
    const workflowId = `chain-scanner:${h.chainId}:bounded-run-${Date.now()}`;
    // From the head block (read again: owners count a transfer once). Caught up, it sleeps pollSeconds
    // between scans: two scans, a second apart, end the run.
    const input: ChainScannerInput = {
      chainId: h.chainId,
      fromBlock: head.toString(),
      pollSeconds: 1,
      waitForBlocks: false,
      scansPerRun: 2,
    };
    const handle = await h.env.client.workflow.start('chainScannerWorkflow', { taskQueue: h.taskQueue, workflowId, args: [input] });
    try {
      const next = await untilContinued(workflowId, handle.firstExecutionRunId);
      const first = await h.env.client.workflow.getHandle(workflowId, handle.firstExecutionRunId).describe();
      assert.equal(first.status.name, 'CONTINUED_AS_NEW');
      const carried = await inputOfRun<ChainScannerInput>(workflowId, next);
      assert.equal(carried.scansPerRun, 2);
      assert.ok(BigInt(carried.fromBlock) > head, `the next run reads on from block ${carried.fromBlock}, past ${head}`);
      assert.ok(
        (carried.checkpoints ?? []).some((c) => BigInt(c.number) === head),
        'the blocks it read go along, to notice a reorg across runs',
      );
      nominateForRecording('chain-scanner--continued-as-new', workflowId, handle.firstExecutionRunId);
    } finally {
      await h.env.client.workflow.getHandle(workflowId).terminate('test over');
    }
  });

  test('the webhook dispatcher continues as new once its run is long, and its next run still dispatches', async () => {
    const h = await getHarness();
    const workflowId = `webhook-dispatcher:bounded-run-${Date.now()}`;
    // A 1 ms poll: idle passes one after another, about ten events each, up to the 500-event bound.
    const input: WebhookDispatcherInput = { pollIntervalMs: 1, batchSize: 100 };
    const handle = await h.env.client.workflow.start('webhookDispatcher', { taskQueue: h.taskQueue, workflowId, args: [input] });
    try {
      const next = await untilContinued(workflowId, handle.firstExecutionRunId);
      const first = await h.env.client.workflow.getHandle(workflowId, handle.firstExecutionRunId).describe();
      assert.equal(first.status.name, 'CONTINUED_AS_NEW');
      assert.ok(first.historyLength >= 500, `the run ended at ${first.historyLength} events`);
      assert.deepEqual(await inputOfRun<WebhookDispatcherInput>(workflowId, next), input);
      const summary = await h.env.client.workflow.getHandle(workflowId).executeUpdate<DispatchSummary, []>('dispatchNow');
      assert.ok(summary.passes >= 1, JSON.stringify(summary));
      nominateForRecording('webhook-dispatcher--continued-as-new', workflowId, handle.firstExecutionRunId);
    } finally {
      await h.env.client.workflow.getHandle(workflowId).terminate('test over');
    }
  });
});
