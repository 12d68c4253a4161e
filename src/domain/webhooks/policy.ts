import { DELIVERY_POLICY } from '../event-log/event-catalog';

/**
 * The delivery policy as pure functions (no I/O, no clock): what to do after an attempt. The delivery
 * activity records the step it returns, and the delivery workflow carries it out (sleep, or stop).
 *
 * Schedule: at most 3 attempts per delivery (DELIVERY_POLICY.maxAttempts). Attempt 2 follows attempt 1
 * after 30 s, attempt 3 follows attempt 2 after 5 min, each stretched by up to +10% jitter so that
 * deliveries that failed together do not all come back at once. A 429 or 503 carrying Retry-After
 * waits at least that long (capped at 1 h, so a receiver can't park a delivery for days).
 */
export const WEBHOOK_RETRY_POLICY = {
  maxAttempts: DELIVERY_POLICY.maxAttempts,
  /** backoffMs[n - 1]: the wait after failed attempt n. */
  backoffMs: [30_000, 5 * 60_000] as readonly number[],
  jitterRatio: 0.1,
  retryableStatuses: DELIVERY_POLICY.retryableStatuses as readonly number[],
  retryAfterStatuses: [429, 503] as readonly number[],
  maxRetryAfterMs: 60 * 60_000,
} as const;

/** What happened on one attempt. */
export type AttemptOutcome =
  | { kind: 'response'; status: number; retryAfterMs?: number }
  | { kind: 'timeout' }
  | { kind: 'connection_error' }
  /** Not sent: the destination resolved to a refused address, or the endpoint is no longer enabled. */
  | { kind: 'refused'; reason: RefusalReason };

export type RefusalReason = 'destination_not_allowed' | 'endpoint_disabled' | 'endpoint_archived';

export type AbandonReason = 'non_retryable_status' | 'max_attempts_reached' | RefusalReason | 'internal_error';

export type NextStep = { action: 'succeeded' } | { action: 'retry'; delayMs: number } | { action: 'abandoned'; reason: AbandonReason };

/**
 * The step after attempt number `attempt` (1-based) of a delivery round.
 * `jitter` is a number in [0, 1) chosen by the workflow (deterministic on replay).
 */
export function planNextStep(
  outcome: AttemptOutcome,
  attempt: number,
  jitter: number,
  backoffMs: readonly number[] = WEBHOOK_RETRY_POLICY.backoffMs,
): NextStep {
  const policy = WEBHOOK_RETRY_POLICY;
  if (outcome.kind === 'refused') return { action: 'abandoned', reason: outcome.reason };
  if (outcome.kind === 'response') {
    if (outcome.status >= 200 && outcome.status < 300) return { action: 'succeeded' };
    if (!policy.retryableStatuses.includes(outcome.status)) return { action: 'abandoned', reason: 'non_retryable_status' };
  }
  if (attempt >= policy.maxAttempts) return { action: 'abandoned', reason: 'max_attempts_reached' };
  const base = backoffMs[Math.min(attempt, backoffMs.length) - 1] ?? 0;
  const clampedJitter = Math.min(Math.max(jitter, 0), 1);
  let delayMs = Math.round(base * (1 + policy.jitterRatio * clampedJitter));
  if (outcome.kind === 'response' && outcome.retryAfterMs !== undefined && policy.retryAfterStatuses.includes(outcome.status)) {
    delayMs = Math.max(delayMs, Math.min(outcome.retryAfterMs, policy.maxRetryAfterMs));
  }
  return { action: 'retry', delayMs };
}

/**
 * Retry-After as milliseconds: delta-seconds ("120") or an HTTP-date. Anything else, or a date in the
 * past, is ignored (undefined).
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d{1,10}$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  const delta = at - nowMs;
  return delta > 0 ? delta : undefined;
}
