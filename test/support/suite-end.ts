/**
 * What a suite process closes after its last test (test/index.ts), the last opened first: only what
 * some test opened, so a run of a few unit tests loads neither the harness nor the browser.
 */
const closers: Array<() => Promise<void>> = [];

export function closeAtSuiteEnd(close: () => Promise<void>): void {
  closers.unshift(close);
}

export async function closeEverything(): Promise<void> {
  for (const close of closers.splice(0)) await close();
}
