import type { ActivityOptions } from '@temporalio/workflow';

/**
 * The retry profiles activities run under; each workflow's activity proxies are named after them.
 * Idempotent steps (database writes, chain reads) retry with backoff until they succeed.
 */
export const UNTIL_DONE: ActivityOptions = {
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
};

/** A few tries, then the workflow decides (an operator command or one delivery attempt must end). */
export const BOUNDED: ActivityOptions = {
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 8 },
};

/** One try per call: the workflow owns the retry budget (settlement), so the partner can see it. */
export const SINGLE_ATTEMPT: ActivityOptions = {
  startToCloseTimeout: '2m',
  retry: { maximumAttempts: 1 },
};
