import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { getHarness } from '../support/harness';
import { bundleWithPatchProbe, replayWithPatchProbe, type ProbedReplay } from '../support/patch-probe';
import { decodeHistory, HISTORIES_DIR } from '../support/record-histories';
import { continueAsNewTypes, historyFacts, patchCallSites, patchMarkers, workflowTypes } from '../support/history-facts';

/**
 * The recorded histories must reach every branch a patch opens, and every continue-as-new:
 * - a patch's new branch: some history holds its `core_patch` marker and, replayed, takes the patched
 *   branch at that patched() call;
 * - its old branch: some history replays through the same patched() call without the marker (a run
 *   recorded before the patch existed, e.g. one of the release baseline), so the old code path is
 *   still proven to replay;
 * - every workflow that can continue as new has a recorded history that does, and it replays.
 * Patch ids and continue-as-new calls are read from workflows/ itself: a new one is covered at once.
 * Every patch was retired in the release baseline (docs/workflow-versioning.md), so today there is
 * no patch to check: the baseline set itself is checked instead (every workflow type the worker
 * runs, the outcomes the release must replay), and so is the reader of patched() calls.
 */

/** The histories recorded when every patch was retired: the old branches of every later patch replay from them. */
const BASELINE = '2026-11-27-baseline';

/** Outcomes the baseline must hold (file names as record-histories.ts writes them). */
const BASELINE_OUTCOMES: Array<[what: string, name: RegExp]> = [
  ['a receive Payment that succeeds', /^payment--receive-succeeded-/],
  ['a Payment that expires', /^payment--(receive|send)-expired-/],
  ['a bank Payment paid out', /^payment--send-bank-completed-succeeded-/],
  ["a bank Payment whose payout failed or came back (the provider's refund to escrow)", /^payment--send-bank-(failed|returned)-/],
  ['a Payment held, then resolved', /^payment--(held-then-|resolved-)/],
  ['a deposit settled', /^deposit--settled-confirmed/],
  ['a deposit held, then resolved', /^deposit--(held-then-|resolved-)/],
  ['a refund sent and confirmed', /^fund-return--refund-confirmed/],
  ['a vault funding confirmed', /^vault-funding--confirmed/],
];

/** Old branches no recorded history can take, and why: reported as skipped, never silently passed. */
const NO_OLD_BRANCH: Record<string, string> = {
  'sandbox-clock':
    'patched() is called only when an advanceClock signal arrives, and no code before the patch sent one (the API route came with it)',
  'settlement-waits-under-fee-cap':
    'patched() is called only for a send failed with type fee_above_cap, which no code before the patch raised (a send the cap stopped then failed as FeeAboveCapError and took the old path without reaching patched())',
};

/** Workflows that can continue as new but have no recorded run that did, and why. */
const NO_CONTINUE_AS_NEW: Record<string, string> = {
  depositWorkflow:
    'continues as new only when the server suggests it (workflowInfo().continueAsNewSuggested: at 4,096 events or 4 MB on the Java test server, fixed there); no deposit gets near that',
};

const files = readdirSync(HISTORIES_DIR, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.json'))
  .sort();
const recorded = files.map((file) => ({
  file,
  ...(JSON.parse(readFileSync(path.join(HISTORIES_DIR, file), 'utf8')) as { workflowId: string; history: unknown }),
}));

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

test('the patched() reader finds each id and flags an id it cannot read (so no live patch escapes this check)', () => {
  const probe = patchCallSites([
    {
      file: 'workflows/probe.ts',
      source:
        "const a = patched('probe-new-branch');\nif (patched(\"probe-second\")) run();\nif (patched(PROBE_ID)) run();\ndeprecatePatch('probe-old');\n",
    },
  ]);
  assert.deepEqual(
    [...probe.ids.entries()],
    [
      ['probe-new-branch', 'workflows/probe.ts:1'],
      ['probe-second', 'workflows/probe.ts:2'],
    ],
  );
  assert.deepEqual(probe.unreadable, ['workflows/probe.ts:3']);
});

test('every patched() call in workflows/ names its patch with a string literal (so this check can read it)', () => {
  assert.deepEqual(sites.unreadable, [], 'patched() calls whose id is not a string literal');
});

/** The patch register's rows under one heading (docs/workflow-versioning.md): the first cell of each table row, an id in backticks. */
function registerRows(heading: '## Live patches' | '## Removed patches'): string[] {
  const text = readFileSync(path.join(__dirname, '..', '..', 'docs', 'workflow-versioning.md'), 'utf8');
  const start = text.indexOf(heading);
  assert.ok(start >= 0, `docs/workflow-versioning.md has a "${heading}" section`);
  const next = text.indexOf('\n## ', start + heading.length);
  return [...text.slice(start, next < 0 ? undefined : next).matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]!);
}

test('the patch register (docs/workflow-versioning.md) lists every patched() id in workflows/, and no other', () => {
  const registered = registerRows('## Live patches');
  assert.deepEqual(
    [...sites.ids.keys()].filter((id) => !registered.includes(id)),
    [],
    'patched() ids with no row in docs/workflow-versioning.md',
  );
  assert.deepEqual(
    registered.filter((id) => !sites.ids.has(id)),
    [],
    'rows of docs/workflow-versioning.md that no patched() call names: move them to "Removed patches"',
  );
  assert.equal(new Set(registered).size, registered.length, 'one row per patch');
});

test("no patched() id reuses a removed patch's id (a history recorded under the old one would replay the new branch)", () => {
  const removed = registerRows('## Removed patches');
  assert.ok(removed.length > 0, 'the "Removed patches" table lists the patches retired in the release baseline');
  assert.deepEqual(
    [...sites.ids.keys()].filter((id) => removed.includes(id)),
    [],
    'patched() ids already used by a removed patch: choose a new id',
  );
  assert.deepEqual(
    Object.keys(NO_OLD_BRANCH).filter((id) => !sites.ids.has(id)),
    [],
    'NO_OLD_BRANCH names ids no patched() call has: remove them',
  );
});

const baseline = recorded.filter((r) => r.file.split(path.sep)[0] === BASELINE);

test(`the release baseline (histories/${BASELINE}) holds a history of every workflow type the worker runs (workflows/index.ts)`, () => {
  const types = workflowTypes();
  assert.ok(types.length >= 10, `workflows/index.ts exports ${types.join(', ')}`);
  const present = new Set(baseline.map((r) => historyFacts(r.history).workflowType));
  assert.deepEqual(
    types.filter((type) => !present.has(type)),
    [],
    `workflow types with no history in histories/${BASELINE}`,
  );
});

for (const [what, name] of BASELINE_OUTCOMES) {
  test(`the release baseline holds ${what}, and it replays`, async () => {
    const replays = await probed();
    const found = baseline.filter((r) => name.test(path.basename(r.file)));
    assert.ok(found.length > 0, `no history in histories/${BASELINE} is named like ${name}`);
    for (const r of found) {
      const error = replays[recorded.indexOf(r)]!.error;
      if (error) throw new Error(`${r.file} does not replay: ${error.message}`, { cause: error });
    }
  });
}

for (const [patchId, where] of sites.ids) {
  test(`a recorded history takes the patched branch of '${patchId}' (${where})`, async () => {
    const replays = await probed();
    const taking = recorded.filter(
      (r, i) =>
        patchMarkers(r.history).includes(patchId) &&
        replays[i]!.decisions.some((d) => d.patchId === patchId && d.used) &&
        !replays[i]!.error,
    );
    assert.ok(
      taking.length > 0,
      `no recorded history holds the marker of '${patchId}' and replays down its patched branch: record one (docs/testing.md, "Workflow versioning")`,
    );
  });

  test(`a recorded history replays '${patchId}' down its old branch (${where})`, async (t) => {
    const replays = await probed();
    const old = recorded.filter(
      (r, i) =>
        !patchMarkers(r.history).includes(patchId) &&
        replays[i]!.decisions.some((d) => d.patchId === patchId && !d.used) &&
        !replays[i]!.error,
    );
    const reason = NO_OLD_BRANCH[patchId];
    if (reason !== undefined) {
      assert.deepEqual(
        old.map((r) => r.file),
        [],
        `'${patchId}' is listed in NO_OLD_BRANCH, yet these histories take its old branch: remove it from the list`,
      );
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
    if (reason !== undefined)
      assert.fail(`${type} is listed in NO_CONTINUE_AS_NEW, yet ${continued[0]!.file} continues as new: remove it from the list`);
  });
}
