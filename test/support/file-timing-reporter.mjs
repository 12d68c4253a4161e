/**
 * A node:test reporter that writes one JSON line per test file: its suite's name (test/index.ts names
 * each file's suite for its path under test/) and its time in ms. test/run.ts balances its shards with
 * them. A line per file, not one at the end: --test-force-exit ends the process before a reporter's
 * last output. Plain JavaScript: node:test loads reporters before tsx's loader.
 *
 * @param {AsyncIterable<{ type: string, data: { nesting?: number, name?: string, details?: { duration_ms?: number } } }>} source
 */
export default async function* fileTimings(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { nesting, name, details } = event.data;
    if (nesting === 0 && name?.endsWith('.test.ts')) yield `${JSON.stringify({ file: name, ms: details?.duration_ms ?? 0 })}\n`;
  }
}
