import { ActivityFailure, ApplicationFailure, patched, sleep } from '@temporalio/workflow';
import { FEE_ABOVE_CAP } from './contracts/settlement';

/** How long a send the fee cap stopped waits before it asks again: a busy hour's base fee falls over minutes. */
export const FEE_CAP_WAIT_MS = 60_000;

function isFeeAboveCap(err: unknown): boolean {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof ApplicationFailure && cause.type === FEE_ABOVE_CAP;
}

/**
 * Runs `send` (an activity that signs and sends money out) until the network's fee cap no longer
 * stops it: such a send signed nothing, so it waits and asks again, never spending a settlement try
 * or holding its resource for an operator. Any other failure is the caller's.
 */
export async function sendUnderFeeCap<T>(send: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await send();
    } catch (err) {
      if (!isFeeAboveCap(err) || !patched('settlement-waits-under-fee-cap')) throw err;
      await sleep(FEE_CAP_WAIT_MS);
    }
  }
}
