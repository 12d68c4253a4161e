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
 * Suites that run their own stack in a child process (`npm start`, the simulation, a crash cell), with
 * the Temporal CLI's dev server: `npm run test:stacks` (TEST_STACKS=1) runs them, and only them, so a
 * cold `npm test` needs no Temporal CLI. Started as their file loads; their tests come last.
 */
const STACKS = [`${path.sep}crash${path.sep}`, `${path.sep}simulation${path.sep}`, `${path.sep}runtime${path.sep}shutdown.test.ts`];
const isStack = (file: string) => STACKS.some((part) => file.includes(part));
const stacksOnly = process.env.TEST_STACKS === '1';

// Before any file registers a test: each test and hook without a timeout of its own gets the default.
installDefaultTimeouts();

// Comma-separated path substrings: a file runs when its path holds any of them.
const only = process.env.TEST_FILTER?.split(',').filter(Boolean);
for (const file of testFiles(__dirname).filter((f) => isStack(f) === stacksOnly)) {
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
