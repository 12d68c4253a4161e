import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { getHarness } from '../support/harness';
import { decodeHistory, HISTORIES_DIR } from '../support/record-histories';

/**
 * Histories recorded from earlier workflow code (RECORD_WORKFLOW_HISTORIES=1 npm test) replay against
 * today's bundle. A change that would make a running workflow non-deterministic fails here, in CI,
 * instead of in production: such a change belongs behind patched().
 */
// One folder per recording; every one of them keeps replaying.
const files = readdirSync(HISTORIES_DIR, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.json'))
  .sort();

test('the recorded histories cover every workflow type the worker runs', () => {
  const types = new Set(files.map((f) => path.basename(f).split('--')[0]));
  for (const type of [
    'payment',
    'deposit',
    'deposit-reconciliation',
    'ledger-reconciliation',
    'payment-reconciliation',
    'chain-scanner',
    'webhook-dispatcher',
    'webhook-delivery',
    'vault-funding',
    'fund-return',
  ]) {
    assert.ok(types.has(type), `no recorded history of ${type}`);
  }
});

interface Recorded {
  workflowId: string;
  history: unknown;
}

/** Every history replayed once, through one replay worker (a worker per history costs seconds in all). */
let replayed: Promise<Array<Error | undefined>> | undefined;
function replayAll(): Promise<Array<Error | undefined>> {
  replayed ??= (async () => {
    const h = await getHarness();
    const histories = files.map((file) => {
      const { workflowId, history } = JSON.parse(readFileSync(path.join(HISTORIES_DIR, file), 'utf8')) as Recorded;
      return { workflowId, history: decodeHistory(history) };
    });
    const errors: Array<Error | undefined> = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle: h.workflowBundle }, histories)) errors.push(result.error);
    return errors;
  })();
  return replayed;
}

files.forEach((file, index) => {
  test(`replays the recorded history ${file} without non-determinism`, async () => {
    const errors = await replayAll();
    assert.equal(errors.length, files.length);
    const error = errors[index];
    if (error) throw error;
  });
});
