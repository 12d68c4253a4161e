import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { assignShards, MAX_ORDER_SEED, orderSeed, orderSeedLine, shardCount, shuffleFiles, shuffleShards } from '../support/shards';

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

  test('the files of a shard are shuffled into a permutation of them, the same for the same seed whatever order they come in', () => {
    const seed = fc.integer({ min: 0, max: MAX_ORDER_SEED });
    fc.assert(
      fc.property(fileSet, seed, fc.nat(8), fc.nat(), (names, s, shard, rotate) => {
        const files = names.map((name) => `${ROOT}/${name}`);
        const order = shuffleFiles(files, s, shard);
        assert.deepEqual([...order].sort(), [...files].sort());
        const rotated = [...files.slice(rotate % files.length), ...files.slice(0, rotate % files.length)];
        assert.deepEqual(shuffleFiles(rotated, s, shard), order);
      }),
    );
  });

  test('other seeds give other orders, none of them path order', () => {
    const files = Array.from({ length: 20 }, (_, i) => `${ROOT}/f${String(i).padStart(2, '0')}.test.ts`);
    const orders = new Set(Array.from({ length: 50 }, (_, s) => shuffleFiles(files, s).join()));
    assert.equal(orders.size, 50, 'distinct orders from 50 seeds');
    assert.ok(!orders.has(files.join()), 'no seed keeps path order');
  });

  test('shuffling the shards keeps every file in the shard the timings gave it, and its expected time', () => {
    fc.assert(
      fc.property(fileSet, fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: MAX_ORDER_SEED }), (names, count, seed) => {
        const files = names.map((name) => `${ROOT}/${name}`);
        const balanced = assignShards(files, count, {}, ROOT, (f) => f.includes('/a'));
        const shuffled = shuffleShards(balanced, seed);
        assert.deepEqual(
          shuffled.map((s) => [[...s.files].sort(), s.expectedSeconds]),
          balanced.map((s) => [s.files, s.expectedSeconds]),
        );
        assert.deepEqual(shuffleShards(balanced, seed), shuffled);
      }),
    );
  });

  test('files picked to run last come after every other file of their shard, under any seed', () => {
    fc.assert(
      fc.property(fileSet, fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: MAX_ORDER_SEED }), (names, count, seed) => {
        const files = names.map((name) => `${ROOT}/${name}`);
        const last = (f: string) => f.includes('/b');
        const balanced = assignShards(files, count, {}, ROOT);
        for (const [i, shard] of shuffleShards(balanced, seed, last).entries()) {
          const firstLast = shard.files.findIndex(last);
          if (firstLast >= 0) assert.ok(shard.files.slice(firstLast).every(last), shard.files.join());
          assert.deepEqual([...shard.files].sort(), balanced[i]!.files);
        }
      }),
    );
  });

  test('TEST_ORDER_SEED replays an order; without it the run draws one; anything but a whole number in range is refused', () => {
    assert.equal(
      orderSeed({ TEST_ORDER_SEED: '12345' }, () => 7),
      12345,
    );
    assert.equal(
      orderSeed({ TEST_ORDER_SEED: '0' }, () => 7),
      0,
    );
    assert.equal(
      orderSeed({}, () => 7),
      7,
    );
    assert.equal(
      orderSeed({ TEST_ORDER_SEED: '' }, () => 7),
      7,
    );
    for (const bad of ['-1', '1.5', 'abc', '0x10', String(MAX_ORDER_SEED + 1)])
      assert.throws(() => orderSeed({ TEST_ORDER_SEED: bad }), /TEST_ORDER_SEED must be a whole number/, bad);
    const drawn = orderSeed({});
    assert.ok(Number.isInteger(drawn) && drawn >= 0 && drawn <= MAX_ORDER_SEED);
    assert.equal(orderSeedLine(12345), 'test order seed: 12345 (TEST_ORDER_SEED=12345 replays it)');
  });

  test('TEST_SHARDS sets the count, never more than the files; recording histories takes one', () => {
    assert.equal(shardCount({ TEST_SHARDS: '4' }, 10), 4);
    assert.equal(shardCount({ TEST_SHARDS: '4' }, 2), 2);
    assert.equal(shardCount({ TEST_SHARDS: '4', RECORD_WORKFLOW_HISTORIES: '2026-12-01-x' }, 10), 1);
    assert.throws(() => shardCount({ TEST_SHARDS: 'two' }, 10), /TEST_SHARDS must be a positive whole number/);
    assert.throws(() => shardCount({ TEST_SHARDS: '0' }, 10), /TEST_SHARDS/);
  });
});
