import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { getHarness } from '../support/harness';
import { bundleWithPatchProbe, replayWithPatchProbe, type ProbedReplay } from '../support/patch-probe';
import { decodeHistory, HISTORIES_DIR } from '../support/record-histories';
import { continueAsNewTypes, historyFacts, patchCallSites, patchMarkers } from '../support/history-facts';

/**
 * The recorded histories must reach every branch a patch opens, and every continue-as-new:
 * - a patch's new branch: some history holds its `core_patch` marker and, replayed, takes the patched
 *   branch at that patched() call;
 * - its old branch: some history replays through the same patched() call without the marker (a run
 *   recorded before the patch existed), so the old code path is still proven to replay;
 * - every workflow that can continue as new has a recorded history that does, and it replays.
 * Patch ids and continue-as-new calls are read from workflows/ itself: a new one is covered at once.
 */

/** Old branches no recorded history can take, and why: reported as skipped, never silently passed. */
const NO_OLD_BRANCH: Record<string, string> = {
  'payment-bank-payout':
    'asked only by a bank Payment, and bank Payments came with this patch: no run recorded before it had a payout',
  'deposit-data-hold-from-books':
    'asked only when a run that did not see a data hold (a rerun, a continue-as-new) is resolved; no history recorded before the patch did that (there the resolution changed nothing and recorded no command)',
  'payment-revives-dropped-transfers':
    'asked only when a transfer a reorg dropped is mined again; no history recorded before the patch saw that, and every one recorded since carries the marker',
};

/** Workflows that can continue as new but have no recorded run that did, and why. */
const NO_CONTINUE_AS_NEW: Record<string, string> = {
  depositWorkflow:
    'continues as new only when the server suggests it (workflowInfo().continueAsNewSuggested: at 4,096 events or 4 MB on the Java test server, fixed there); no deposit gets near that',
};

const files = readdirSync(HISTORIES_DIR, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.json'))
  .sort();
const recorded = files.map((file) => ({ file, ...(JSON.parse(readFileSync(path.join(HISTORIES_DIR, file), 'utf8')) as { workflowId: string; history: unknown }) }));

let probing: Promise<ProbedReplay[]> | undefined;
function probed(): Promise<ProbedReplay[]> {
  probing ??= (async () => {
    // The harness installs the Temporal runtime (its logger, its metrics) before any worker, this replay's too.
    await getHarness();
    const histories = recorded.map((r) => ({ workflowId: r.workflowId, history: decodeHistory(r.history) }));
    return replayWithPatchProbe(await bundleWithPatchProbe(), histories);
  })();
  return probing;
}

const sites = patchCallSites();

test('every patched() call in workflows/ names its patch with a string literal (so this check can read it)', () => {
  assert.ok(sites.ids.size > 0, 'found no patched() call in workflows/');
  assert.deepEqual(sites.unreadable, [], 'patched() calls whose id is not a string literal');
});

/** The patch register's live rows (docs/workflow-versioning.md): the first cell of each table row, an id in backticks. */
function registeredPatches(): string[] {
  const text = readFileSync(path.join(__dirname, '..', '..', 'docs', 'workflow-versioning.md'), 'utf8');
  const live = text.slice(text.indexOf('## Live patches'), text.indexOf('## Removed patches'));
  return [...live.matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]!);
}

test('the patch register (docs/workflow-versioning.md) lists every patched() id in workflows/, and no other', () => {
  const registered = registeredPatches();
  assert.deepEqual([...sites.ids.keys()].filter((id) => !registered.includes(id)), [], 'patched() ids with no row in docs/workflow-versioning.md');
  assert.deepEqual(registered.filter((id) => !sites.ids.has(id)), [], 'rows of docs/workflow-versioning.md that no patched() call names: move them to "Removed patches"');
  assert.equal(new Set(registered).size, registered.length, 'one row per patch');
});

for (const [patchId, where] of sites.ids) {
  test(`a recorded history takes the patched branch of '${patchId}' (${where})`, async () => {
    const replays = await probed();
    const taking = recorded.filter((r, i) => patchMarkers(r.history).includes(patchId) && replays[i]!.decisions.some((d) => d.patchId === patchId && d.used) && !replays[i]!.error);
    assert.ok(taking.length > 0, `no recorded history holds the marker of '${patchId}' and replays down its patched branch: record one (docs/testing.md, "Workflow versioning")`);
  });

  test(`a recorded history replays '${patchId}' down its old branch (${where})`, async (t) => {
    const replays = await probed();
    const old = recorded.filter((r, i) => !patchMarkers(r.history).includes(patchId) && replays[i]!.decisions.some((d) => d.patchId === patchId && !d.used) && !replays[i]!.error);
    const reason = NO_OLD_BRANCH[patchId];
    if (reason !== undefined) {
      assert.deepEqual(old.map((r) => r.file), [], `'${patchId}' is listed in NO_OLD_BRANCH, yet these histories take its old branch: remove it from the list`);
      t.skip(`no old branch to replay: ${reason}`);
      return;
    }
    assert.ok(old.length > 0, `no recorded history replays through patched('${patchId}') without its marker: its old branch is unproven`);
  });
}

for (const type of continueAsNewTypes()) {
  test(`a recorded history of ${type} continues as new, and replays`, async (t) => {
    const replays = await probed();
    const continued = recorded.filter((r) => {
      const facts = historyFacts(r.history);
      return facts.workflowType === type && facts.continuedAsNew;
    });
    const reason = NO_CONTINUE_AS_NEW[type];
    if (reason !== undefined && continued.length === 0) {
      t.skip(`not recorded: ${reason}`);
      return;
    }
    assert.ok(continued.length > 0, `no recorded history of ${type} ends in WorkflowExecutionContinuedAsNew: record one`);
    for (const r of continued) {
      const error = replays[recorded.indexOf(r)]!.error;
      if (error) throw new Error(`${r.file} does not replay: ${error.message}`, { cause: error });
    }
    if (reason !== undefined) assert.fail(`${type} is listed in NO_CONTINUE_AS_NEW, yet ${continued[0]!.file} continues as new: remove it from the list`);
  });
}
