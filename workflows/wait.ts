import { condition, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import { chainAdvancedSignal } from './contracts/chain-advanced';

/**
 * Waits until fn() holds or ms pass; answers fn(). Unlike condition(fn, ms) it never cancels its
 * timer (a won race leaves it to fire unobserved): Temporal's Java time-skipping test server can wedge
 * a workflow that cancels a timer at the moment it fires.
 */
export async function wakeOn(fn: () => boolean, ms: number): Promise<boolean> {
  let fired = false;
  void sleep(ms).then(() => {
    fired = true;
  });
  await condition(() => fn() || fired);
  return fn();
}

/** Events a long-running workflow's run may reach before it continues as new. */
export const MAX_RUN_EVENTS = 500;

/**
 * True once a long-running workflow (scanner, dispatcher) should continue as new: its history is
 * replayed in full whenever a worker has it out of its cache, so a run is kept short.
 */
export function runIsLong(maxEvents = MAX_RUN_EVENTS): boolean {
  const info = workflowInfo();
  return info.historyLength >= maxEvents || info.continueAsNewSuggested;
}

/**
 * Waits for the chain to advance (the scanner's chainAdvanced signal), for fn(), or for a safety-net
 * timer, whichever comes first. One timer per round, armed by the first wait of the round and kept
 * across the early wakes (a block, a message) that follow, so a round lasts the timer's time however
 * many blocks come; it is never cancelled (see wakeOn). A block signalled while the caller was reading
 * the chain wakes the next wait at once.
 */
export function blockWaiter() {
  let advanced = false;
  let fired = true;
  setHandler(chainAdvancedSignal, () => {
    advanced = true;
  });
  return {
    /** 'timer' ends the round (the next wait arms a new timer of the given ms); 'early' does not. */
    async wait(fn: () => boolean, ms: number): Promise<'early' | 'timer'> {
      if (fired) {
        fired = false;
        void sleep(ms).then(() => {
          fired = true;
        });
      }
      await condition(() => advanced || fired || fn());
      advanced = false;
      return fired ? 'timer' : 'early';
    },
  };
}
