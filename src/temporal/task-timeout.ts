import type { CompiledWorkflowOptions, WorkflowClientInterceptor } from '@temporalio/client';

/**
 * A client interceptor giving the workflows its client starts `seconds` for each workflow task,
 * unless a start names its own. For a worker that caches no workflow: each of its tasks replays the
 * whole history, so on a busy machine the tasks queued behind one another can outlast Temporal's
 * default 10 s, and a task the server takes back is replayed again from the start.
 */
export function workflowTaskTimeout(seconds: number): WorkflowClientInterceptor {
  const timed = <T extends { options: CompiledWorkflowOptions }>(input: T): T => ({
    ...input,
    options: { ...input.options, workflowTaskTimeout: input.options.workflowTaskTimeout ?? { seconds } },
  });
  return {
    start: (input, next) => next(timed(input)),
    signalWithStart: (input, next) => next(timed(input)),
  };
}
