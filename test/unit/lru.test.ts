import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { recoverMessageAddress } from 'viem';
import { DEFAULT_MAX_CACHED_SIGNERS, createHdCustody } from '../../src/custody';
import { LruCache } from '../../src/custody/lru';

const TEST_MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

describe('LRU cache', () => {
  test('holds at most max entries and forgets the least recently used first; a read makes an entry recent', () => {
    const cache = new LruCache<string, number>(3);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    assert.equal(cache.get('a'), 1); // a is now the most recent: b goes first
    cache.set('d', 4);
    assert.deepEqual(cache.keys(), ['c', 'a', 'd']);
    assert.equal(cache.get('b'), undefined);
    cache.set('c', 30); // an overwrite is a use too
    cache.set('e', 5);
    assert.deepEqual(cache.keys(), ['d', 'c', 'e']);
    assert.equal(cache.size, 3);
    assert.equal(cache.get('c'), 30);
  });

  test('getOrCreate creates only on a miss', () => {
    const cache = new LruCache<number, string>(2);
    let created = 0;
    const make = (k: number) => () => {
      created += 1;
      return `v${k}`;
    };
    assert.equal(cache.getOrCreate(1, make(1)), 'v1');
    assert.equal(cache.getOrCreate(1, make(1)), 'v1');
    assert.equal(created, 1);
    cache.getOrCreate(2, make(2));
    cache.getOrCreate(3, make(3)); // evicts 1
    assert.equal(cache.getOrCreate(1, make(1)), 'v1');
    assert.equal(created, 4);
  });

  test('agrees with a plain list model over 5000 mixed operations, never above its maximum', () => {
    const max = 7;
    const cache = new LruCache<number, number>(max);
    let model: Array<[number, number]> = []; // least recent first
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31); // deterministic, so a failure replays
    for (let i = 0; i < 5000; i += 1) {
      const key = next() % 12;
      if (next() % 2 === 0) {
        const found = model.find(([k]) => k === key);
        if (found) model = [...model.filter(([k]) => k !== key), found];
        assert.equal(cache.get(key), found?.[1], `get ${key} at step ${i}`);
      } else {
        cache.set(key, i);
        model = [...model.filter(([k]) => k !== key), [key, i] as [number, number]].slice(-max);
      }
      assert.ok(cache.size <= max);
      assert.deepEqual(
        cache.keys(),
        model.map(([k]) => k),
        `order at step ${i}`,
      );
    }
  });

  test('refuses a maximum below 1', () => {
    assert.throws(() => new LruCache(0), /at least 1/);
    assert.throws(() => new LruCache(1.5), /at least 1/);
  });
});

describe('HD custody signer cache', () => {
  test('keeps at most maxCachedSigners signers; an evicted path derives the same address and still signs', async () => {
    const custody = createHdCustody({ mnemonic: TEST_MNEMONIC, maxCachedSigners: 2 });
    const fresh = createHdCustody({ mnemonic: TEST_MNEMONIC });
    const addresses = [0, 1, 2, 3, 4].map((index) => custody.signer({ purpose: 'escrow', index }).address);
    assert.equal(custody.cachedSigners(), 2);
    assert.equal(new Set(addresses).size, 5);

    // Index 0 was evicted long ago: derived again, it is the same key.
    assert.equal(custody.deriveAddress({ purpose: 'escrow', index: 0 }), fresh.deriveAddress({ purpose: 'escrow', index: 0 }));
    const signer = custody.signer({ purpose: 'escrow', index: 0 });
    const signature = await signer.signMessage({ message: 'still mine' });
    assert.equal(await recoverMessageAddress({ message: 'still mine', signature }), addresses[0]);
    assert.equal(custody.cachedSigners(), 2);
  });

  test('is bounded by default', () => {
    const custody = createHdCustody({ mnemonic: TEST_MNEMONIC });
    for (let index = 0; index < DEFAULT_MAX_CACHED_SIGNERS + 10; index += 1) custody.signer({ purpose: 'deposit', index });
    assert.equal(custody.cachedSigners(), DEFAULT_MAX_CACHED_SIGNERS);
    // Handing out an address caches no signer (it is derived natively).
    custody.deriveAddress({ purpose: 'escrow', index: 5000 });
    assert.equal(custody.cachedSigners(), DEFAULT_MAX_CACHED_SIGNERS);
  });
});
