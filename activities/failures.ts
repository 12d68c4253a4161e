import { ApplicationFailure } from '@temporalio/common';
import { LedgerError } from '../src/domain/ledger/ledger';
import { SettlementRefusedError } from '../src/domain/settlement/settlement-sender';
import { SETTLEMENT_REFUSED } from '../workflows/contracts/settlement';

/**
 * Runs an activity's body and turns the domain's business refusals into non-retryable, typed
 * failures the workflows decide on. Anything else is transient: the retry policy handles it.
 */
export async function refusalsAsFailures<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof SettlementRefusedError) {
      throw ApplicationFailure.create({ type: SETTLEMENT_REFUSED, message: err.message, details: [err.reason], nonRetryable: true });
    }
    if (err instanceof LedgerError) {
      throw ApplicationFailure.create({ type: err.type, message: err.message, details: [err.details], nonRetryable: true });
    }
    throw err;
  }
}
