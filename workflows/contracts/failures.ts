import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';

/**
 * The failure type of an activity whose write the database refused for its data (a PostgreSQL data
 * exception, 22xxx, or integrity violation, 23xxx): retrying the same input can't help, so the
 * activity fails for good and the workflow holds its resource for an operator. See
 * activities/failures.ts for the classification.
 */
export const DATA_ERROR = 'data_error';

/** True when err is an activity's data error, as a workflow catches it. */
export function isDataError(err: unknown): boolean {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure && cause.type === DATA_ERROR;
}
