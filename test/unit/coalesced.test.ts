import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { coalesced } from '../../src/runtime/webhook-kicks';

/**
 * The listener's kicks: whatever the interleaving of requests and finishing calls, at most one call
 * is in flight, a request made while one runs is followed by a call that starts after it, and the
 * requests made during one call cause exactly one more call (not one each).
 */
test('coalesced: one call in flight; requests meanwhile cause exactly one more, started after them', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.oneof(fc.constant('request' as const), fc.constant('finish' as const)), { maxLength: 40 }),
      async (steps) => {
        let inFlight = 0;
        let calls = 0;
        const finishers: Array<() => void> = [];
        const c = coalesced(async () => {
          inFlight += 1;
          calls += 1;
          assert.equal(inFlight, 1);
          await new Promise<void>((resolve) => finishers.push(resolve));
          inFlight -= 1;
        });
        const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
        // The expected count: a request while idle starts a call; requests during a call add one follow-up.
        let expected = 0;
        let running = false;
        let pending = false;
        for (const step of steps) {
          if (step === 'request') {
            c.request();
            if (!running) {
              running = true;
              expected += 1;
            } else pending = true;
          } else if (finishers.length > 0) {
            finishers.shift()!();
            await tick();
            if (pending) {
              pending = false;
              expected += 1;
            } else running = false;
          }
          await tick();
        }
        while (finishers.length > 0) {
          finishers.shift()!();
          await tick();
          if (pending) {
            pending = false;
            expected += 1;
          }
          await tick();
        }
        await c.idle();
        assert.equal(calls, expected);
        assert.equal(inFlight, 0);
      },
    ),
    { numRuns: 200 },
  );
});
