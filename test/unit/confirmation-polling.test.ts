import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { confirmationPollMs, SAFETY_NET_FLOOR_MS, safetyNetFloorMs, safetyNetMs } from '../../src/domain/chain/pure/confirmation-polling';

const schedules = fc.record({
  firstMs: fc.integer({ min: 1, max: 3_600_000 }),
  maxMs: fc.integer({ min: 1, max: 3_600_000 }),
  fastRounds: fc.integer({ min: 0, max: 400 }),
});

describe('How long a workflow waits before it reads the chain again', () => {
  test('polling: firstMs doubling up to maxMs for fastRounds reads, then 30 s doubling every 10 reads up to 10 minutes', () => {
    const fast = { firstMs: 100, maxMs: 2000, fastRounds: 150 };
    assert.deepEqual(
      [0, 1, 2, 4, 5, 149].map((r) => confirmationPollMs(r, fast)),
      [100, 200, 400, 1600, 2000, 2000],
    );
    assert.deepEqual(
      [150, 159, 160, 170, 190, 10_000].map((r) => confirmationPollMs(r, fast)),
      [30_000, 30_000, 60_000, 120_000, 480_000, 600_000],
    );
  });

  test('woken by blocks, the safety net is the polling schedule but never under the floor: an hourly poll stays hourly', () => {
    const fast = { firstMs: 100, maxMs: 2000, fastRounds: 150 };
    assert.deepEqual(
      [0, 3, 4, 149, 150].map((r) => safetyNetMs(r, fast)),
      [2000, 2000, 2000, 2000, 30_000],
    );
    assert.equal(safetyNetMs(0, { firstMs: 3_600_000, maxMs: 3_600_000, fastRounds: 150 }), 3_600_000);
  });

  test('a policy can lower the floor (the test harness polls as before) and a policy without one keeps 2 s', () => {
    const fast = { firstMs: 100, maxMs: 2000, fastRounds: 150 };
    assert.equal(safetyNetMs(0, fast, safetyNetFloorMs({ safetyNetFloorSeconds: 0 })), 100);
    assert.equal(safetyNetMs(0, fast, safetyNetFloorMs({})), SAFETY_NET_FLOOR_MS);
  });

  test('property: the safety net is never faster than the floor nor than the poll it replaces, and never shortens from one round to the next within a phase', () => {
    fc.assert(
      fc.property(schedules, fc.nat({ max: 2000 }), (fast, round) => {
        const net = safetyNetMs(round, fast);
        assert.ok(net >= SAFETY_NET_FLOOR_MS && net >= confirmationPollMs(round, fast));
        assert.equal(net, Math.max(SAFETY_NET_FLOOR_MS, confirmationPollMs(round, fast)));
        assert.ok(net <= Math.max(SAFETY_NET_FLOOR_MS, fast.maxMs, 600_000));
        // Within the fast rounds and after them, the wait never shrinks as rounds go by.
        if (round + 1 !== fast.fastRounds) assert.ok(safetyNetMs(round + 1, fast) >= net);
      }),
    );
  });
});
