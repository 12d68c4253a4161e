import { isDataError } from './contracts/failures';

/**
 * The data-error hold, one rule for the Payment and deposit workflows. A data error (the database
 * refused a write for its data: retrying the same write can't help) holds the Payment or deposit for
 * an operator instead of failing the run: `step` runs, and when an activity in it answers a data
 * error, `hold` writes the hold (the machine's onDataError, persisted) and remembers what the refusal
 * stopped, for the operator's release. The hold is written by an activity too: if the database itself
 * is down, that write is transient and retries. Any other error is the run's.
 */
export async function holdingDataErrors(step: () => Promise<void>, hold: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (err) {
    if (!isDataError(err)) throw err;
    await hold();
  }
}
