import { AsyncLocalStorage } from 'node:async_hooks';
import { appendFileSync } from 'node:fs';

/**
 * Fault hooks for the crash matrix (`npm run crash-matrix`, simulate/crash-matrix.ts). A crash point
 * names a boundary around a side effect. With `CRASH_AT=<point>[#<n>]` in its environment, the process
 * kills itself with SIGKILL (no shutdown, no finally blocks, nothing flushed) the n-th time (default
 * the first) it reaches that point; with `CRASH_POINTS_TRACE=<file>` it appends one JSON line per point
 * reached (how the matrix learns the boundaries a lifecycle passes). Unset, both are a no-op: a
 * comparison per call.
 *
 * Names: `activity.<activityName>.before|after` (activities/crash-points.ts, every activity), and the
 * finer points below. The environment is read once, at load, like the configuration.
 */

/** The settlement sender's boundaries (src/domain/settlement/settlement-sender.ts). */
export const SETTLEMENT_CRASH_POINTS = {
  /** The signed leg is committed; it was not broadcast yet. */
  legRecorded: 'settlement.leg.after-record',
  /** The leg was broadcast; the activity has not returned. */
  legBroadcast: 'settlement.leg.after-broadcast',
} as const;

/** The API's boundaries while it creates a Payment with an Idempotency-Key. */
export const API_CRASH_POINTS = {
  /** The Payment row and its event are committed; its workflow is not started, the answer not sent. */
  paymentCommitted: 'api.create-payment.after-commit',
  /** The handler answered (workflow started); the idempotency record is not completed, nothing sent. */
  beforeIdempotencyComplete: 'api.idempotency.before-complete',
} as const;

export function activityCrashPoint(activity: string, phase: 'before' | 'after'): string {
  return `activity.${activity}.${phase}`;
}

export interface CrashTarget {
  point: string;
  /** Crash on this hit of the point (1 = the first). */
  occurrence: number;
}

/** `point` or `point#n`. */
export function parseCrashTarget(spec: string): CrashTarget {
  const m = /^([a-zA-Z0-9_.-]+)(?:#(\d+))?$/.exec(spec);
  if (!m || (m[2] !== undefined && Number(m[2]) < 1))
    throw new Error(`CRASH_AT must be <point> or <point>#<n ≥ 1>, got ${JSON.stringify(spec)}`);
  return { point: m[1]!, occurrence: m[2] === undefined ? 1 : Number(m[2]) };
}

export function formatCrashTarget(t: CrashTarget): string {
  return t.occurrence === 1 ? t.point : `${t.point}#${t.occurrence}`;
}

const target = process.env.CRASH_AT ? parseCrashTarget(process.env.CRASH_AT) : undefined;
const traceFile = process.env.CRASH_POINTS_TRACE || undefined;
const hits = new Map<string, number>();
/** The activity a point is reached in (set by activities/crash-points.ts), for points deeper in its call. */
const activityContext = new AsyncLocalStorage<() => Record<string, string | undefined>>();

/** Runs `fn` with `context` as the trace context of every point reached inside it that names none. */
export function withCrashContext<T>(context: () => Record<string, string | undefined>, fn: () => T): T {
  return target || traceFile ? activityContext.run(context, fn) : fn();
}

/**
 * Marks a boundary. `context` (read only when tracing; by default the enclosing activity's) goes to the
 * trace: which workflow reached the point, so the matrix can tell a Payment's boundaries from a deposit's
 * or a refund's, also for the settlement sender's points inside an activity.
 */
export function crashPoint(point: string, context?: () => Record<string, string | undefined>): void {
  if (!target && !traceFile) return;
  const n = (hits.get(point) ?? 0) + 1;
  hits.set(point, n);
  if (traceFile) appendFileSync(traceFile, `${JSON.stringify({ point, n, ...(context ?? activityContext.getStore())?.() })}\n`);
  if (target && target.point === point && target.occurrence === n) process.kill(process.pid, 'SIGKILL');
}
