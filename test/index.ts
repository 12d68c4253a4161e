import { after } from 'node:test';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { closeHarness, getHarness } from './support/harness';
import { closeBrowser } from './support/browser';
import { recordHistories } from './support/record-histories';
import { installDefaultTimeouts } from './support/test-timeouts';

/**
 * The single entry of `npm test`: every *.test.ts file runs in this one process, so the suite
 * shares one PostgreSQL database, one Temporal time-skipping server and one worker.
 */
function testFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) return name === 'support' ? [] : testFiles(full);
      return name.endsWith('.test.ts') ? [full] : [];
    });
}

/**
 * Suites that run their own stack in a child process, started as their file loads (crash matrix,
 * simulation). Every file loads before any test runs, so they start at once either way; their tests
 * come last so that the suite waits for them only if the rest of the suite was quicker.
 */
const BACKGROUND = [`${path.sep}crash${path.sep}`, `${path.sep}simulation${path.sep}`];
const inBackground = (file: string) => BACKGROUND.some((dir) => file.includes(dir));

// Before any file registers a test: each test and hook without a timeout of its own gets the default.
installDefaultTimeouts();

// Comma-separated path substrings: a file runs when its path holds any of them.
const only = process.env.TEST_FILTER?.split(',').filter(Boolean);
const files = testFiles(__dirname);
for (const file of [...files.filter((f) => !inBackground(f)), ...files.filter(inBackground)]) {
  if (only && !only.some((part) => file.includes(part))) continue;
  // Synchronously and in order: node:test registers each file's tests as it is loaded.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require(file);
}

after(async () => {
  if (process.env.RECORD_WORKFLOW_HISTORIES) {
    const written = await recordHistories(await getHarness());
    console.log(`# recorded ${written.length} workflow histories`);
  }
  await closeBrowser();
  await closeHarness();
});
