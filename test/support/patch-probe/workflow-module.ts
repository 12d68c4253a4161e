/**
 * Stands in for `@temporalio/workflow` in the patch probe's bundle (test/support/patch-probe/index.ts):
 * the SDK itself, with `patched()` reporting every decision it makes to the `patchProbe` sink. Only
 * the coverage check of the recorded histories bundles it; the worker and the replay test never do.
 */
import { patched as sdkPatched, proxySinks, workflowInfo, type Sinks } from '@temporalio/workflow/lib/index';

export * from '@temporalio/workflow/lib/index';

export interface PatchProbeSinks extends Sinks {
  patchProbe: {
    /** `replaying`: the decision came from the recorded history (marker there or not), not from live code. */
    decided(patchId: string, used: boolean, replaying: boolean): void;
  };
}

const { patchProbe } = proxySinks<PatchProbeSinks>();

export function patched(patchId: string): boolean {
  const used = sdkPatched(patchId);
  patchProbe.decided(patchId, used, workflowInfo().unsafe.isReplaying);
  return used;
}
