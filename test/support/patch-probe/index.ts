import path from 'node:path';
import { bundleWorkflowCode, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { WORKFLOWS_PATH } from '../../../src/temporal/workflow-bundle';
import type { decodeHistory } from '../record-histories';

/** One patched() decision taken while a recorded history replayed. */
export interface PatchDecision {
  patchId: string;
  used: boolean;
}

export interface ProbedReplay {
  /** Decisions read from the history (its marker there or not); live decisions past its end are left out. */
  decisions: PatchDecision[];
  error: Error | undefined;
}

const noop = () => undefined;
const quiet = { trace: noop, debug: noop, info: noop, warn: noop, error: console.error, log: noop };

/** workflows/ bundled with `@temporalio/workflow` replaced by the probe (same SDK, patched() reports). */
export function bundleWithPatchProbe(): Promise<WorkflowBundleWithSourceMap> {
  const probe = path.join(__dirname, 'workflow-module.ts');
  return bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: quiet,
    webpackConfigHook: (config) => ({
      ...config,
      resolve: {
        ...config.resolve,
        alias: { ...(config.resolve?.alias as Record<string, string> | undefined), '@temporalio/workflow$': probe },
      },
    }),
  });
}

/**
 * Replays each history through one replay worker on the probe bundle, and answers, per history, the
 * patched() decisions its replay took. Histories replay one at a time, so the decisions reported
 * between two results belong to the second.
 */
export async function replayWithPatchProbe(
  bundle: WorkflowBundleWithSourceMap,
  histories: Array<{ workflowId: string; history: ReturnType<typeof decodeHistory> }>,
): Promise<ProbedReplay[]> {
  let current: PatchDecision[] = [];
  const sinks = {
    patchProbe: {
      decided: {
        fn: (_info: unknown, patchId: string, used: boolean, replaying: boolean) => {
          if (replaying) current.push({ patchId, used });
        },
        callDuringReplay: true,
      },
    },
  };
  const out: ProbedReplay[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: bundle, sinks }, histories)) {
    out.push({ decisions: current, error: result.error });
    current = [];
  }
  return out;
}
