import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflows, TRACED_WORKFLOW_BUNDLE_FILE, WORKFLOW_BUNDLE_FILE, WORKFLOWS_PATH } from '../src/temporal/workflow-bundle';

/**
 * `npm run build`, after tsc: bundles workflows/ into dist/workflow-bundle.js (and, with the tracing
 * interceptors, dist/workflow-bundle-traced.js), which the compiled worker loads (src/temporal/workflow-bundle.ts). A workflow that does not bundle (say it imports a
 * Node built-in) fails here, at build time.
 */
async function main(): Promise<void> {
  for (const [file, traced] of [
    [WORKFLOW_BUNDLE_FILE, false],
    [TRACED_WORKFLOW_BUNDLE_FILE, true],
  ] as const) {
    const started = Date.now();
    const { code } = await bundleWorkflows(WORKFLOWS_PATH, { traced });
    const out = path.resolve(__dirname, '..', 'dist', file);
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, code);
    const kib = Math.round(Buffer.byteLength(code) / 1024);
    process.stdout.write(`build: ${path.relative(process.cwd(), out)} (${kib} KiB) in ${((Date.now() - started) / 1000).toFixed(1)}s\n`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`build: bundling workflows/ failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
