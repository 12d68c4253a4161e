import { after } from 'node:test';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { closeHarness, getHarness } from './support/harness';
import { recordHistories } from './support/record-histories';

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

const only = process.env.TEST_FILTER;
for (const file of testFiles(__dirname)) {
  if (only && !file.includes(only)) continue;
  // Synchronously and in order: node:test registers each file's tests as it is loaded.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require(file);
}

after(async () => {
  if (process.env.RECORD_WORKFLOW_HISTORIES) {
    const written = await recordHistories(await getHarness());
    console.log(`# recorded ${written.length} workflow histories`);
  }
  await closeHarness();
});
