import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createChainFaults } from '../../src/chain/chain-faults';
import { startAnvil, type AnvilNode } from '../../src/embedded/anvil';
import {
  chainDrift,
  checkChainsAgainst,
  readChainState,
  setNextBaseFee,
  withChainRestored,
  withNextBaseFee,
} from '../support/chain-baseline';

const GWEI = 1_000_000_000n;

/** On an anvil node of its own: what the helpers change must be back afterwards, on the real node. */
describe('Chain changes that put themselves back', () => {
  let node: AnvilNode;

  before(async () => {
    node = await startAnvil({ port: 0 });
  });

  after(async () => {
    await node.stop();
  });

  test('a body that pauses mining and raises the base fee, then fails, leaves the chain as it found it', async () => {
    const baseline = await readChainState(node.rpcUrl);
    const faults = createChainFaults(node.rpcUrl);
    await assert.rejects(
      withNextBaseFee(node.rpcUrl, 200n * GWEI, async () => {
        await faults.pauseMining();
        await faults.mine(1);
        assert.ok((await readChainState(node.rpcUrl)).nextBaseFeeWei >= 150n * GWEI, 'the fee is up inside');
        throw new Error('the test failed');
      }),
      /the test failed/,
    );
    const now = await readChainState(node.rpcUrl);
    assert.deepEqual(chainDrift(baseline, now), []);
    assert.deepEqual(now.mining, { mode: 'automine' });
  });

  test('a file that leaves mining paused and the base fee high fails, named, with what it left; the chain is put back for the next file', async () => {
    const baselines = new Map([[node.rpcUrl, await readChainState(node.rpcUrl)]]);
    const faults = createChainFaults(node.rpcUrl);
    await setNextBaseFee(node.rpcUrl, 200n * GWEI);
    await faults.mine(1);
    await faults.pauseMining();
    await assert.rejects(
      checkChainsAgainst('payments/leaky.test.ts', baselines),
      (err: Error) =>
        /^payments\/leaky\.test\.ts left a shared chain changed/.test(err.message) &&
        err.message.includes('mining is paused, the baseline automine') &&
        err.message.includes("the next block's base fee is 175 gwei"),
    );
    const now = await readChainState(node.rpcUrl);
    assert.deepEqual(now.mining, { mode: 'automine' });
    assert.ok(now.nextBaseFeeWei < GWEI, `the base fee is back down: ${now.nextBaseFeeWei}`);
    await checkChainsAgainst('payments/next.test.ts', baselines);
  });

  test('an interval mining mode is put back as it was, not as automine', async () => {
    const faults = createChainFaults(node.rpcUrl);
    await faults.resumeMining({ intervalSeconds: 5 });
    try {
      await withChainRestored(node.rpcUrl, () => faults.pauseMining());
      assert.deepEqual((await readChainState(node.rpcUrl)).mining, { mode: 'interval', seconds: 5 });
    } finally {
      await faults.resumeMining();
    }
  });
});
