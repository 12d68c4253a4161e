/**
 * A node:test reporter that writes, at the end of the run, each test file's time (the sum of its
 * top-level tests and suites, in ms) as one JSON object: test/run.ts balances its shards with them.
 * Plain JavaScript: node:test loads reporters before tsx's loader.
 *
 * @param {AsyncIterable<{ type: string, data: { nesting?: number, file?: string, details?: { duration_ms?: number } } }>} source
 */
export default async function* fileTimings(source) {
  /** @type {Record<string, number>} */
  const byFile = {};
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { nesting, file, details } = event.data;
    if (nesting !== 0 || !file) continue;
    byFile[file] = (byFile[file] ?? 0) + (details?.duration_ms ?? 0);
  }
  yield `${JSON.stringify(byFile)}\n`;
}
