import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  DEFAULT_LIMIT_POLICY,
  initialLimit,
  nextLimit,
  type AdaptiveLimitPolicy,
  type LimitState,
} from '../../src/platform/adaptive-limit';

const policy: AdaptiveLimitPolicy = { ...DEFAULT_LIMIT_POLICY, maxLimit: 40 };

/** Runs writes of `times` on `route`, one ending every `gapMs`. */
function run(state: LimitState, times: number[], route = 'POST /v2/payments', gapMs = 5, startMs = 0): LimitState {
  return times.reduce((s, tookMs, i) => nextLimit(policy, s, { route, tookMs, nowMs: startMs + i * gapMs }), state);
}

describe('the adaptive limit of writes in flight', () => {
  test('over any writes on any routes the limit stays between its floor and its ceiling', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ route: fc.constantFrom('a', 'b', 'c'), tookMs: fc.double({ min: 0, max: 60_000, noNaN: true }), gap: fc.nat(2000) }),
        ),
        (writes) => {
          let state = initialLimit(policy);
          let now = 0;
          for (const w of writes) {
            now += w.gap;
            state = nextLimit(policy, state, { route: w.route, tookMs: w.tookMs, nowMs: now });
            assert.ok(state.limit >= policy.minLimit && state.limit <= policy.maxLimit, `limit ${state.limit}`);
            assert.ok((state.recent[w.route]?.length ?? 0) <= policy.window);
          }
        },
      ),
    );
  });

  test('writes at their unloaded time never shrink it, and it grows back to the ceiling', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 1, max: policy.floorMs * policy.tolerance, noNaN: true }), { minLength: 1, maxLength: 300 }),
        (times) => {
          const shrunk: LimitState = { ...initialLimit(policy), limit: policy.minLimit };
          let state = shrunk;
          for (const [i, tookMs] of times.entries()) {
            const next = nextLimit(policy, state, { route: 'r', tookMs, nowMs: i });
            assert.ok(next.limit >= state.limit, 'never shrinks');
            state = next;
          }
          const grown = run(
            state,
            Array.from({ length: 2000 }, () => 10),
            'r',
          );
          assert.equal(grown.limit, policy.maxLimit);
        },
      ),
    );
  });

  test('writes that queue (ten times the route’s fastest) shrink it to its floor, at most once per slow write’s time', () => {
    const warmed = run(
      initialLimit(policy),
      Array.from({ length: 50 }, () => 30),
    );
    assert.equal(warmed.limit, policy.maxLimit);
    // Five slow writes ending within one slow write's time: one shrink.
    const burst = run(warmed, [300, 300, 300, 300, 300], 'POST /v2/payments', 10, 1000);
    assert.equal(burst.limit, policy.maxLimit * policy.backoff);
    const sustained = run(
      warmed,
      Array.from({ length: 200 }, () => 300),
      'POST /v2/payments',
      50,
      1000,
    );
    assert.equal(sustained.limit, policy.minLimit);
  });

  test('a route slower by nature is judged by its own fastest, not another route’s', () => {
    const fastRoute = run(
      initialLimit(policy),
      Array.from({ length: 50 }, () => 20),
      'POST /v2/payments',
    );
    const slowRoute = run(
      fastRoute,
      Array.from({ length: 50 }, () => 400),
      'POST /v2/vaults',
    );
    assert.equal(slowRoute.limit, policy.maxLimit, 'a steady 400 ms route is not queueing');
  });
});
