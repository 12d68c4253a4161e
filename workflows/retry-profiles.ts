import type { ActivityOptions } from '@temporalio/workflow';

/**
 * The retry profiles activities run under; each workflow's activity proxies are named after them.
 * Idempotent steps (database writes, chain reads) retry with backoff until they succeed.
 */
export const UNTIL_DONE: ActivityOptions = {
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
};

/**
 * UNTIL_DONE for long, heartbeating work (a chain scan of a busy range): a dead worker is noticed
 * within the heartbeat timeout, and a slow but live attempt is not cut off and redone from the start.
 */
export const UNTIL_DONE_HEARTBEATING: ActivityOptions = {
  ...UNTIL_DONE,
  startToCloseTimeout: '10m',
  heartbeatTimeout: '20s',
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
