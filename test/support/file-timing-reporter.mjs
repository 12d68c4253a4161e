/**
 * A node:test reporter that writes one JSON line per top-level test or suite: its file and its time in
 * ms. test/run.ts sums them per file to balance its shards. A line per result, not one at the end:
 * --test-force-exit ends the process before a reporter's last output. Plain JavaScript: node:test
 * loads reporters before tsx's loader.
 *
 * @param {AsyncIterable<{ type: string, data: { nesting?: number, file?: string, details?: { duration_ms?: number } } }>} source
 */
export default async function* fileTimings(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { nesting, file, details } = event.data;
    if (nesting === 0 && file) yield `${JSON.stringify({ file, ms: details?.duration_ms ?? 0 })}\n`;
  }
}
