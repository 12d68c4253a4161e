import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AdmissionGate } from '../../src/http/middleware/admission';

type Release = () => void;

describe('the admission gate of the API’s writes', () => {
  test('over any sequence of arrivals and departures: at most maxInFlight run, at most maxQueued wait, a refusal only when both are full, waiters admitted first come first served', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 4 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 60 }),
        async (maxInFlight, maxQueued, steps) => {
          // A long wait: no waiter times out within the property; timing out has its own test.
          const gate = new AdmissionGate({ maxInFlight, maxQueued, maxQueueWaitMs: 60_000 });
          const running: Release[] = [];
          const admittedOrder: number[] = [];
          const queuedOrder: number[] = [];
          const pending: Array<Promise<void>> = [];
          let n = 0;
          for (const arrive of steps) {
            if (arrive) {
              const id = n++;
              const full = gate.inFlight >= maxInFlight;
              const queueFull = gate.queued >= maxQueued;
              const entered = gate.enter();
              if (entered === null) {
                assert.ok(full && queueFull, 'refused only when running and waiting are both full');
              } else if (typeof entered === 'function') {
                assert.ok(!full, 'admitted at once only with room');
                running.push(entered);
                admittedOrder.push(id);
              } else {
                assert.ok(full && !queueFull, 'waits only when running is full and the queue is not');
                queuedOrder.push(id);
                pending.push(
                  entered.then((release) => {
                    assert.ok(release, 'a waiter is admitted, not timed out');
                    running.push(release);
                    admittedOrder.push(id);
                  }),
                );
              }
            } else if (running.length > 0) {
              running.shift()!();
              await Promise.resolve();
            }
            assert.ok(gate.inFlight <= maxInFlight && gate.queued <= maxQueued);
          }
          while (running.length > 0 || gate.queued > 0) {
            running.shift()?.();
            await new Promise((resolve) => setImmediate(resolve));
          }
          await Promise.all(pending);
          const waitersAdmitted = admittedOrder.filter((id) => queuedOrder.includes(id));
          assert.deepEqual(waitersAdmitted, queuedOrder, 'waiters are admitted in the order they came');
          assert.equal(gate.inFlight, 0);
        },
      ),
    );
  });

  test('a waiter not admitted within maxQueueWaitMs is refused and leaves the queue; a release twice frees one place', async () => {
    const gate = new AdmissionGate({ maxInFlight: 1, maxQueued: 1, maxQueueWaitMs: 20 });
    const first = gate.enter() as Release;
    assert.equal(typeof first, 'function');
    const waiting = gate.enter();
    assert.ok(waiting instanceof Promise);
    assert.equal(await waiting, null, 'timed out');
    assert.equal(gate.queued, 0);
    first();
    first();
    assert.equal(gate.inFlight, 0);
    const again = gate.enter();
    assert.equal(typeof again, 'function');
  });

  test('an adaptive gate admits fewer once its writes take longer than their route’s fastest', async () => {
    const gate = new AdmissionGate({
      maxInFlight: 4,
      maxQueued: 0,
      maxQueueWaitMs: 60_000,
      adaptive: { minLimit: 1, tolerance: 2, floorMs: 0, window: 10, backoff: 0.5 },
    });
    assert.equal(gate.limit, 4);
    // A fast write teaches the route's fastest; one far slower (held 30 ms) halves the limit.
    (gate.enter() as (route?: string) => void)('POST /x');
    const slow = gate.enter() as (route?: string) => void;
    await new Promise((resolve) => setTimeout(resolve, 30));
    slow('POST /x');
    assert.equal(gate.limit, 2);
    const held = [gate.enter(), gate.enter()];
    assert.ok(held.every((r) => typeof r === 'function'));
    assert.equal(gate.enter(), null, 'refused past the learned limit, below maxInFlight');
  });
});
