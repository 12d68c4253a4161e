import { after, describe } from 'node:test';
import path from 'node:path';
import { installDefaultTimeouts } from './support/test-timeouts';
import { processFiles, runsLast } from './support/test-files';
import { closeEverything } from './support/suite-end';
import { checkChainBaseline } from './support/chain-baseline';
import { checkEngineClock } from './support/engine-clock';

/**
 * One process of the suite: the files it loads share one PostgreSQL database, one Temporal
 * time-skipping server and one worker. `npm test` (test/run.ts) starts several, each with a share of
 * the files in TEST_FILES; on its own, this runs every file TEST_FILTER selects.
 */
const files = processFiles();

// Before any file registers a test: each test and hook without a timeout of its own gets the default.
installDefaultTimeouts();

for (const file of files) {
  // Each file's tests under a suite named for it: its top-level hooks run around its own tests, and
  // its time is its suite's (test/run.ts balances shards by it). Loaded synchronously, in the order
  // TEST_FILES lists them (test/run.ts draws it from the run's order seed).
  describe(path.relative(__dirname, file), () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require(file);
    // After the file's own after hooks (they run in the order registered): a chain it changed and left
    // fails it here, by name, and is put back for the next file.
    after(() => checkChainBaseline(path.relative(__dirname, file)));
    // Then the engine's clock: a file that left it locked fails here, not the file that next waits on
    // it. A file declared to leave it locked runs last in its shard (test-files.ts): nothing waits after.
    if (!runsLast(file)) after(() => checkEngineClock(path.relative(__dirname, file)));
  });
}

after(async () => {
  if (process.env.RECORD_WORKFLOW_HISTORIES) {
    const { recordHistories } = await import('./support/record-histories');
    const { getHarness } = await import('./support/harness');
    const written = await recordHistories(await getHarness());
    console.log(`# recorded ${written.length} workflow histories`);
  }
  await closeEverything();
});
