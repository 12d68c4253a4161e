import { ActivityFailure, ApplicationFailure, sleep } from '@temporalio/workflow';
import { isDataError } from './contracts/failures';
import { isSettlementRefusal } from './contracts/settlement';
import { sendUnderFeeCap } from './fee-cap';

export type SettlementCheck = 'confirmed' | 'pending' | 'reverted';

/**
 * One settlement attempt, the same for every workflow that sends money out (Payments, deposits): the
 * workflow supplies its activities and its state machine's steps, each persisted before it returns.
 */
export interface SettlementSteps {
  /** One broadcast try (a single-attempt activity: the workflow owns the budget). */
  broadcast(): Promise<{ txHash: string }>;
  /** Re-reads every leg at the confirmation depth. */
  check(): Promise<SettlementCheck>;
  /** Nothing can be sent (no destination, a forbidden one...): retrying can't help, an operator must look. */
  refused(reasonCode: string): Promise<void>;
  /** The try failed before anything was broadcast: answers the backoff before the next, or null when held. */
  attemptFailed(): Promise<number | null>;
  broadcastDone(txHash: string): Promise<void>;
  /**
   * Once confirmed, the net leg's transaction the chain mined: a fee replacement's hash when the
   * replacement was mined, not the broadcast one's. Null: keep the broadcast hash.
   */
  minedTxHash(): Promise<string | null>;
  confirmed(txHash: string): Promise<void>;
  trouble(reason: 'settlement_failed' | 'settlement_unconfirmed'): Promise<void>;
  /** 'early': woken before the round's timer (a new block), so the check that follows spends no round of the budget. */
  waitBeforeCheck(check: number): Promise<'early' | 'timer'>;
  maxConfirmationChecks: number;
  /**
   * Waits before the first check too: a transaction just broadcast is in no block yet, so a check at
   * once reads nothing and costs the engine a round trip (runs before the short-steps patch checked).
   */
  checkAfterABlock?: boolean;
}

export async function settleOnce(steps: SettlementSteps): Promise<void> {
  let txHash: string;
  try {
    ({ txHash } = await sendUnderFeeCap(() => steps.broadcast()));
  } catch (err) {
    const refusal = refusalOf(err);
    if (refusal) return steps.refused(refusal);
    // A data error is the caller's to hold on (holdingDataErrors), not a spent attempt.
    if (isDataError(err)) throw err;
    const backoffMs = await steps.attemptFailed();
    if (backoffMs !== null) await sleep(backoffMs);
    return;
  }
  await steps.broadcastDone(txHash);
  const first = steps.checkAfterABlock ? 'wait' : 'check';
  for (let check = 0; check < steps.maxConfirmationChecks;) {
    // The last round's wait is followed by one more check (first = 'wait'), never by giving up unread.
    if (first === 'wait' && (await steps.waitBeforeCheck(check)) !== 'early') check += 1;
    const status = await steps.check();
    if (status === 'confirmed') return steps.confirmed((await steps.minedTxHash()) ?? txHash);
    if (status === 'reverted') return steps.trouble('settlement_failed');
    if (first === 'check' && (await steps.waitBeforeCheck(check)) !== 'early') check += 1;
  }
  // Broadcast but never confirmed: it may still land, so nothing is resent automatically.
  await steps.trouble('settlement_unconfirmed');
}

function refusalOf(err: unknown): string | null {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  if (!(cause instanceof ApplicationFailure) || !isSettlementRefusal(cause.type)) return null;
  return (cause.details?.[0] as string | undefined) ?? 'settlement_destination_missing';
}
