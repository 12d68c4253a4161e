import { existsSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, type WorkflowBundleOption, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { tracingStarted } from '../telemetry/tracing';

/** workflows/ from source: what `npm start`, the tests and the build bundle. */
export const WORKFLOWS_PATH = path.resolve(__dirname, '../../workflows/index.ts');

/** Written by `npm run build` (scripts/build-workflow-bundle.ts) at the root of dist/. */
export const WORKFLOW_BUNDLE_FILE = 'workflow-bundle.js';

/** Written beside it: the bundle with Temporal's OpenTelemetry workflow interceptors, for a traced worker. */
export const TRACED_WORKFLOW_BUNDLE_FILE = 'workflow-bundle-traced.js';

/** The workflow side of tracing: spans of each workflow task, exported through a sink. */
export const WORKFLOW_TRACING_MODULE = require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

/**
 * Bundles workflows/ once (webpack); tests and the service reuse the bundle for every worker. Traced:
 * with the tracing interceptors (a traced worker needs them in its bundle; an untraced one runs none).
 */
export async function bundleWorkflows(
  workflowsPath = WORKFLOWS_PATH,
  opts: { traced?: boolean } = { traced: tracingStarted() !== null },
): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath,
    logger: quietBundlerLogger,
    ...(opts.traced ? { workflowInterceptorModules: [WORKFLOW_TRACING_MODULE] } : {}),
  });
}

const noop = () => undefined;
const quietBundlerLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: console.error, log: noop };

/**
 * The worker's workflow code. Compiled (dist/), it is the bundle the build wrote, so a worker starts
 * in seconds and a broken bundle fails the build instead of a deployment. From source (tsx), workflows/
 * is bundled now, so a change shows without a build.
 */
export async function loadWorkflowBundle(): Promise<WorkflowBundleOption> {
  if (path.extname(__filename) !== '.js') return bundleWorkflows();
  const codePath = path.resolve(__dirname, '../..', tracingStarted() ? TRACED_WORKFLOW_BUNDLE_FILE : WORKFLOW_BUNDLE_FILE);
  if (!existsSync(codePath)) throw new Error(`${codePath} is missing: run \`npm run build\` (it bundles workflows/)`);
  return { codePath };
}
