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

for (const file of files) {
  test(`replays the recorded history ${file} without non-determinism`, async () => {
    const h = await getHarness();
    const { workflowId, history } = JSON.parse(readFileSync(path.join(HISTORIES_DIR, file), 'utf8')) as { workflowId: string; history: unknown };
    await Worker.runReplayHistory({ workflowBundle: h.workflowBundle }, decodeHistory(history), workflowId);
  });
}
