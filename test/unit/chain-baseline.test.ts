import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chainDrift, CLOCK_SLACK_SECONDS, type ChainState } from '../support/chain-baseline';

const GWEI = 1_000_000_000n;
const calm: ChainState = { mining: { mode: 'automine' }, nextBaseFeeWei: 7n, clockAheadSeconds: 0 };

describe('A shared chain back at its baseline', () => {
  test('a chain as it was, or with a base fee fallen further by itself, has no drift', () => {
    assert.deepEqual(chainDrift(calm, calm), []);
    assert.deepEqual(chainDrift({ ...calm, nextBaseFeeWei: GWEI }, { ...calm, nextBaseFeeWei: 875_000_000n }), []);
    assert.deepEqual(chainDrift(calm, { ...calm, clockAheadSeconds: CLOCK_SLACK_SECONDS }), []);
  });

  test('mining left paused or on an interval, a base fee left above the baseline and a clock moved ahead are each named', () => {
    assert.deepEqual(chainDrift(calm, { ...calm, mining: { mode: 'paused' } }), ['mining is paused, the baseline automine']);
    assert.deepEqual(chainDrift(calm, { ...calm, mining: { mode: 'interval', seconds: 2 } }), [
      'mining is a block every 2 s, the baseline automine',
    ]);
    assert.deepEqual(chainDrift(calm, { ...calm, nextBaseFeeWei: 175n * GWEI }), [
      "the next block's base fee is 175 gwei (175000000000 wei), above the baseline 0 gwei (7 wei)",
    ]);
    assert.deepEqual(chainDrift(calm, { ...calm, clockAheadSeconds: 3600 }), [
      "the chain's clock is 3600 s ahead of the wall clock, the baseline 0 s",
    ]);
  });

  test('a clock moved ahead by an earlier file is the baseline of the next, not its fault', () => {
    const moved = { ...calm, clockAheadSeconds: 3600 };
    assert.deepEqual(chainDrift(moved, { ...moved, clockAheadSeconds: 3601 }), []);
  });
});
