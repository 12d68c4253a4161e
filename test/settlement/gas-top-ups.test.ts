import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Address, Hash } from 'viem';
import { MAX_TOP_UPS_PER_BATCH, topUpBatcher, type SendTopUps, type TopUp } from '../../src/domain/settlement/gas-top-ups';

const addressOf = (i: number) => `0x${i.toString(16).padStart(40, '0')}` as Address;
const hashOf = (address: Address, batch: number) =>
  `0x${batch.toString(16).padStart(4, '0')}${address.slice(2, 62).padEnd(60, '0')}` as Hash;

/** A treasury that answers each batch when the test releases it, failing from `failsAt` on. */
function heldTreasury(failsAt: (batch: number) => number | null = () => null) {
  const batches: TopUp[][] = [];
  const releases: Array<() => void> = [];
  const send: SendTopUps = (topUps) => {
    const batch = batches.push(topUps) - 1;
    return new Promise((resolve) => {
      releases.push(() => {
        const from = failsAt(batch);
        resolve(topUps.map((t, i) => (from !== null && i >= from ? new Error(`failed ${t.address}`) : hashOf(t.address, batch))));
      });
    });
  };
  return { send, batches, release: () => releases.shift()?.() };
}

describe('Gas top-up batches', () => {
  test('requests made while a batch is on its way go together in the next one: two sends for forty payers', async () => {
    const treasury = heldTreasury();
    const batcher = topUpBatcher(treasury.send);
    const first = batcher.request(addressOf(1), 10n);
    const rest = Array.from({ length: 39 }, (_, i) => batcher.request(addressOf(i + 2), 10n));
    treasury.release();
    assert.equal(await first, hashOf(addressOf(1), 0));
    await new Promise((r) => setImmediate(r));
    treasury.release();
    const hashes = await Promise.all(rest);
    assert.deepEqual(
      treasury.batches.map((b) => b.length),
      [1, 39],
    );
    assert.deepEqual(
      hashes,
      rest.map((_, i) => hashOf(addressOf(i + 2), 1)),
    );
  });

  test('every caller gets its own address’s answer: an address asking again shares its top-up (the most asked in its batch), batches stay bounded, a failure fails only the rest of its batch', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 70 }), fc.bigInt({ min: 1n, max: 10n ** 18n })), { minLength: 1, maxLength: 160 }),
        fc.option(fc.integer({ min: 0, max: MAX_TOP_UPS_PER_BATCH }), { nil: null }),
        async (asked, failsAt) => {
          const treasury = heldTreasury((batch) => (batch === 1 ? failsAt : null));
          const batcher = topUpBatcher(treasury.send);
          const answers = asked.map(([i, amount]) =>
            batcher.request(addressOf(i), amount).then(
              (h) => h,
              (e: Error) => e,
            ),
          );
          for (let settled = false; !settled;) {
            treasury.release();
            await new Promise((r) => setImmediate(r));
            settled =
              treasury.batches.length > 0 &&
              (await Promise.race([Promise.all(answers).then(() => true), new Promise<boolean>((r) => setImmediate(() => r(false)))]));
          }
          const addresses = treasury.batches.map((b) => b.map((t) => t.address));
          for (const batch of addresses) {
            assert.ok(batch.length <= MAX_TOP_UPS_PER_BATCH);
            assert.equal(new Set(batch).size, batch.length, 'an address at most once per batch');
          }
          const sentTo = addresses.flat();
          assert.equal(new Set(sentTo).size, sentTo.length, 'each address topped up once, however often it asked');
          for (const [k, answer] of (await Promise.all(answers)).entries()) {
            const [i, amount] = asked[k]!;
            const address = addressOf(i);
            const batch = addresses.findIndex((b) => b.includes(address));
            const position = addresses[batch]!.indexOf(address);
            const sent = treasury.batches[batch]![position]!.amountWei;
            // The first request goes out alone at once; its address's later callers share that transaction.
            if (batch === 0) assert.equal(sent, asked[0]![1], 'the first top-up sends what its caller asked');
            else {
              assert.ok(sent >= amount, 'never less than this caller asked');
              const mostAsked = asked.filter(([j]) => j === i).reduce((m, [, a]) => (a > m ? a : m), 0n);
              assert.equal(sent, mostAsked, 'the most any caller of that address asked');
            }
            if (batch === 1 && failsAt !== null && position >= failsAt) assert.ok(answer instanceof Error);
            else assert.equal(answer, hashOf(address, batch));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  test('a send that throws fails every request of its batch, and the next batch still goes', async () => {
    let calls = 0;
    const batcher = topUpBatcher(async (topUps) => {
      calls += 1;
      if (calls === 1) throw new Error('lease not taken');
      return topUps.map((t) => hashOf(t.address, calls));
    });
    await assert.rejects(batcher.request(addressOf(1), 1n), /lease not taken/);
    assert.equal(await batcher.request(addressOf(1), 1n), hashOf(addressOf(1), 2));
  });
});
