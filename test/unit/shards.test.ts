import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { assignShards, shardCount } from '../support/shards';

const ROOT = '/suite';
const fileSet = fc.uniqueArray(fc.stringMatching(/^[a-z]{1,8}\/[a-z]{1,8}\.test\.ts$/), { minLength: 1, maxLength: 60 });

describe('Shards of npm test', () => {
  test('every file runs in exactly one shard, in path order, and no shard exceeds the mean by more than the longest file', () => {
    fc.assert(
      fc.property(fileSet, fc.integer({ min: 1, max: 6 }), fc.array(fc.integer({ min: 0, max: 300 })), (names, count, seconds) => {
        const timings = Object.fromEntries(names.map((name, i) => [name, seconds[i % Math.max(seconds.length, 1)] ?? 1]));
        const files = names.map((name) => `${ROOT}/${name}`);
        const shards = assignShards(files, count, timings, ROOT);
        assert.deepEqual(shards.flatMap((s) => s.files).sort(), [...files].sort());
        assert.ok(shards.length <= count);
        for (const shard of shards) assert.deepEqual(shard.files, [...shard.files].sort());
        const weights = files.map((f) => timings[f.slice(ROOT.length + 1)]!);
        const mean = weights.reduce((a, b) => a + b, 0) / count;
        for (const shard of shards) assert.ok(shard.expectedSeconds <= mean + Math.max(...weights) + 1e-9);
      }),
    );
  });

  test('files kept together run in a shard of their own besides the others (with one shard, in it), which stay balanced', () => {
    fc.assert(
      fc.property(
        fileSet,
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1 }),
        (names, count, seconds) => {
          const timings = Object.fromEntries(names.map((name, i) => [name, seconds[i % seconds.length]!]));
          const files = names.map((name) => `${ROOT}/${name}`);
          const together = (file: string) => file.includes('/a');
          const shards = assignShards(files, count, timings, ROOT, together);
          assert.deepEqual(shards.flatMap((s) => s.files).sort(), [...files].sort());
          const keptFiles = files.filter(together);
          if (count === 1) return assert.equal(shards.length, 1);
          const own = shards.filter((s) => s.files.some(together));
          assert.ok(own.length <= 1);
          if (own[0]) assert.deepEqual(own[0].files, [...keptFiles].sort());
          const others = shards.filter((s) => !s.files.some(together));
          assert.ok(others.length <= count);
          const weights = files.filter((f) => !together(f)).map((f) => timings[f.slice(ROOT.length + 1)]!);
          const bound = weights.reduce((a, b) => a + b, 0) / count + Math.max(0, ...weights);
          for (const shard of others) assert.ok(shard.expectedSeconds <= bound + 1e-9);
        },
      ),
    );
  });

  test('a file without a measured time counts as the median of those measured', () => {
    const names = ['a.test.ts', 'b.test.ts', 'c.test.ts', 'new.test.ts'];
    const timings = { 'a.test.ts': 10, 'b.test.ts': 30, 'c.test.ts': 20 };
    const shards = assignShards(
      names.map((name) => `${ROOT}/${name}`),
      2,
      timings,
      ROOT,
    );
    // b (30) and c (20) first, then new.test.ts as 20 beside c, then a beside b.
    assert.deepEqual(
      shards.map((s) => [s.files.map((f) => f.slice(ROOT.length + 1)), s.expectedSeconds]),
      [
        [['a.test.ts', 'b.test.ts'], 40],
        [['c.test.ts', 'new.test.ts'], 40],
      ],
    );
  });

  test('TEST_SHARDS sets the count, never more than the files; recording histories takes one', () => {
    assert.equal(shardCount({ TEST_SHARDS: '4' }, 10), 4);
    assert.equal(shardCount({ TEST_SHARDS: '4' }, 2), 2);
    assert.equal(shardCount({ TEST_SHARDS: '4', RECORD_WORKFLOW_HISTORIES: '2026-12-01-x' }, 10), 1);
    assert.throws(() => shardCount({ TEST_SHARDS: 'two' }, 10), /TEST_SHARDS must be a positive whole number/);
    assert.throws(() => shardCount({ TEST_SHARDS: '0' }, 10), /TEST_SHARDS/);
  });
});
