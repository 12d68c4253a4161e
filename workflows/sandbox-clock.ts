import { patched, setHandler } from '@temporalio/workflow';
import { advanceClockSignal } from './contracts/payment';

/**
 * A Payment's clock, as a sandbox app may move it (advanceClock): the run's timers and deadlines read
 * `nowMs()`, so after a move they decide as they would have that much later. Nothing else in the run
 * changes: a production Payment's clock is never moved (the API refuses it), so its `nowMs()` is the
 * workflow clock.
 */
export function sandboxClock(carriedSeconds: number, onMove: () => void) {
  let advancedSeconds = carriedSeconds;
  setHandler(advanceClockSignal, (move) => {
    // Before this patch the signal had no handler: a history holding one replays as it ran, unmoved.
    if (!patched('sandbox-clock')) return;
    if (move.advancedSeconds <= advancedSeconds) return;
    advancedSeconds = move.advancedSeconds;
    onMove();
  });
  return {
    nowMs: () => Date.now() + advancedSeconds * 1000,
    get advancedSeconds() {
      return advancedSeconds;
    },
  };
}
