import { ApplicationFailure } from '@temporalio/common';
import { LedgerError } from '../src/domain/ledger/ledger';
import { SettlementRefusedError } from '../src/domain/settlement/settlement-sender';
import { DATA_ERROR } from '../workflows/contracts/failures';
import { FEE_ABOVE_CAP, SETTLEMENT_REFUSED } from '../workflows/contracts/settlement';
import { FeeAboveCapError } from '../src/chain/types';
import { PROVIDER_FAILURE, PROVIDER_STATE_UNCERTAIN } from '../workflows/contracts/payment';
import { ProviderError } from '../src/offramp/offramp-provider';

/**
 * How an activity's failure is classified, in one place:
 * - a business refusal (settlement refused, a ledger rule) is non-retryable, typed for the workflow;
 * - a send the network's fee cap stopped is typed `fee_above_cap` and stays retryable;
 * - an off-ramp provider's refusal or uncertainty is non-retryable, typed; its unavailability
 *   (timeout, 5xx) retries with the same idempotency key;
 * - a PostgreSQL data error (SQLSTATE class 22 "data exception": invalid text, bad byte sequence,
 *   value out of range; class 23 "integrity constraint violation": check, not-null, foreign key,
 *   unique) is non-retryable `data_error`: the same input fails the same way on every attempt;
 * - anything else (connection lost or refused, pool acquire timeout, serialization failure 40001,
 *   deadlock 40P01, statement timeout 57014, RPC timeouts, unknown errors) stays a plain error, and
 *   the retry policy retries it with backoff.
 */
export function classifyActivityError(activity: string, err: unknown): unknown {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof FeeAboveCapError) {
    // Retried with backoff like any error; once the tries are spent the workflow waits (it signed nothing).
    return ApplicationFailure.create({ type: FEE_ABOVE_CAP, message: err.message, nonRetryable: false });
  }
  if (err instanceof SettlementRefusedError) {
    return ApplicationFailure.create({ type: SETTLEMENT_REFUSED, message: err.message, details: [err.reason], nonRetryable: true });
  }
  if (err instanceof ProviderError && err.kind !== 'unavailable') {
    const type = err.kind === 'uncertain' ? PROVIDER_STATE_UNCERTAIN : PROVIDER_FAILURE;
    return ApplicationFailure.create({
      type,
      message: `${activity}: ${err.message}`,
      details: [err.kind, err.providerCode],
      nonRetryable: true,
    });
  }
  if (err instanceof LedgerError) {
    return ApplicationFailure.create({ type: err.type, message: err.message, details: [err.details], nonRetryable: true });
  }
  const sqlState = dataErrorState(err);
  if (sqlState) {
    // Names the activity and the cause, never the values (they may hold secrets or the bad bytes).
    return ApplicationFailure.create({
      type: DATA_ERROR,
      message: `${activity}: the database refused the data (SQLSTATE ${sqlState}, ${SQLSTATE_NAMES[sqlState] ?? `class ${sqlState.slice(0, 2)}`})`,
      details: [{ activity, sqlState }],
      nonRetryable: true,
    });
  }
  return err;
}

/**
 * Wraps every activity of a factory so that none can forget the classification. `retryDataErrors`
 * keeps a data error retryable (with backoff) for the few long-lived singletons that must not stop
 * (see docs/decisions/workflows-and-layers.md, "Errors in activities"): it is still typed in the message.
 */
export function classifiedActivities<T extends Record<string, (...args: never[]) => Promise<unknown>>>(
  activities: T,
  opts: { retryDataErrors?: boolean } = {},
): T {
  const wrapped: Record<string, (...args: never[]) => Promise<unknown>> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        const classified = classifyActivityError(name, err);
        if (opts.retryDataErrors && classified instanceof ApplicationFailure && classified.type === DATA_ERROR) {
          throw ApplicationFailure.create({
            type: DATA_ERROR,
            message: classified.message,
            details: classified.details ?? undefined,
            nonRetryable: false,
          });
        }
        throw classified;
      }
    };
  }
  return wrapped as T;
}

/**
 * The SQLSTATE of a PostgreSQL data error (class 22 or 23), or null. Prisma 7 over @prisma/adapter-pg
 * raises it either as a mapped PrismaClientKnownRequestError (P2000, P2002, P2003, P2004, P2011,
 * P2020...), whose meta.driverAdapterError.cause carries the original SQLSTATE as originalCode (or as
 * code for an unmapped one), or, on the raw pool, as pg's DatabaseError with `code`.
 */
export function dataErrorState(err: unknown): string | null {
  for (const candidate of causes(err)) {
    const state = sqlStateOf(candidate);
    if (state && (state.startsWith('22') || state.startsWith('23'))) return state;
    const prismaCode = (candidate as { code?: unknown }).code;
    if (typeof prismaCode === 'string' && PRISMA_DATA_CODES[prismaCode]) return PRISMA_DATA_CODES[prismaCode];
  }
  return null;
}

function sqlStateOf(e: object): string | null {
  const o = e as { code?: unknown; originalCode?: unknown; kind?: unknown };
  for (const c of [o.originalCode, o.kind === 'postgres' ? o.code : undefined, o.code]) {
    if (typeof c === 'string' && /^[0-9A-Z]{5}$/.test(c) && !c.startsWith('P')) return c;
  }
  return null;
}

/** err, its meta.driverAdapterError and its cause chain (bounded: a cyclic chain must not hang). */
function causes(err: unknown): object[] {
  const out: object[] = [];
  const queue: unknown[] = [err];
  while (queue.length > 0 && out.length < 8) {
    const e = queue.shift();
    if (typeof e !== 'object' || e === null || out.includes(e)) continue;
    out.push(e);
    const o = e as { cause?: unknown; meta?: { driverAdapterError?: unknown } };
    queue.push(o.meta?.driverAdapterError, o.cause);
  }
  return out;
}

/** Prisma's own codes for data errors, when the SQLSTATE itself is not at hand. */
const PRISMA_DATA_CODES: Record<string, string> = {
  P2000: '22001', // value too long for the column
  P2002: '23505', // unique violation
  P2003: '23503', // foreign key violation
  P2004: '23514', // constraint failed
  P2011: '23502', // null constraint violation
  P2020: '22003', // value out of range
};

const SQLSTATE_NAMES: Record<string, string> = {
  '22001': 'string_data_right_truncation',
  '22003': 'numeric_value_out_of_range',
  '22021': 'character_not_in_repertoire',
  '22P02': 'invalid_text_representation',
  '22P05': 'untranslatable_character',
  '23502': 'not_null_violation',
  '23503': 'foreign_key_violation',
  '23505': 'unique_violation',
  '23514': 'check_violation',
};
