import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { getHarness } from '../support/harness';
import { decodeHistory, HISTORIES_DIR } from '../support/record-histories';
import { historyFacts, workflowTypes } from '../support/history-facts';

/**
 * Histories recorded from earlier workflow code (RECORD_WORKFLOW_HISTORIES=<set> npm test) replay against
 * today's bundle. A change that would make a running workflow non-deterministic fails here, in CI,
 * instead of in production: such a change belongs behind patched().
 */
// One folder per recording; every one of them keeps replaying.
const files = readdirSync(HISTORIES_DIR, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.json'))
  .sort();

interface Recorded {
  workflowId: string;
  history: unknown;
}

const read = (file: string) => JSON.parse(readFileSync(path.join(HISTORIES_DIR, file), 'utf8')) as Recorded;

test('the recorded histories cover every workflow type the worker runs (workflows/index.ts)', () => {
  const types = new Set(files.map((f) => historyFacts(read(f).history).workflowType));
  const missing = workflowTypes().filter((type) => !types.has(type));
  assert.deepEqual(missing, [], 'workflow types with no recorded history');
});

/** Every history replayed once, through one replay worker (a worker per history costs seconds in all). */
let replayed: Promise<Array<Error | undefined>> | undefined;
function replayAll(): Promise<Array<Error | undefined>> {
  replayed ??= (async () => {
    const h = await getHarness();
    const histories = files.map((file) => {
      const { workflowId, history } = read(file);
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
