import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { ResponseBodyTooLargeError } from 'viem';
import type { ChainRegistry } from '../../src/chain/registry';
import type { Chain } from '../../src/chain/types';
import { isRangeTooLarge, scanRange } from '../../src/domain/chain/chain-scan';

/**
 * A node whose log queries fail for ranges wider than `maxBlocks` (a busy token's response over the
 * client's limit), recording each range asked for. Only what scanRange reads is answered.
 */
function nodeRefusingWideRanges(head: bigint, maxBlocks: bigint) {
  const asked: Array<[bigint, bigint]> = [];
  const chain = {
    getBlockNumber: async () => head,
    getBlockHash: async (n: bigint) => `0x${n.toString(16).padStart(64, '0')}`,
    getBlockHeader: async (n: bigint) => ({ hash: `0x${n.toString(16).padStart(64, '0')}`, timestamp: n * 2n }),
    getTransfers: async ({ fromBlock, toBlock }: { fromBlock: bigint; toBlock: bigint }) => {
      asked.push([fromBlock, toBlock]);
      if (toBlock - fromBlock + 1n > maxBlocks) throw new ResponseBodyTooLargeError({ maxSize: 10_485_760, size: 50_000_000 });
      return [];
    },
  } as unknown as Chain;
  const chains = {
    get: () => chain,
    network: () => ({ assets: [{ tokenAddress: '0x0000000000000000000000000000000000000001' }] }),
    networks: () => [],
  } as unknown as ChainRegistry;
  return { chains, asked };
}

describe('A scan range the node refuses for its size', () => {
  test('property: the scan reads the first half again until the node answers, and goes on from the block after it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.bigInt({ min: 1n, max: 500n }), fc.bigInt({ min: 1n, max: 2000n }), async (maxBlocks, head) => {
        const { chains, asked } = nodeRefusingWideRanges(head, maxBlocks);
        const result = await scanRange({ chains, takers: [], batchBlocks: 500 }, { chainId: 1, fromBlock: '1' });
        const [from, to] = asked[asked.length - 1]!;
        assert.equal(from, 1n);
        assert.ok(to - from + 1n <= maxBlocks, 'the range read is one the node answers');
        assert.equal(result.nextFromBlock, (to + 1n).toString(), 'nothing skipped, nothing read twice');
        assert.equal(result.caughtUp, to === head);
        assert.equal(result.checkpoint?.number, to.toString());
      }),
      { numRuns: 200 },
    );
  });

  test('other failures are not retried by halving: a node that is down fails the scan at once', async () => {
    const chain = {
      getBlockNumber: async () => 100n,
      getBlockHash: async () => `0x${'1'.repeat(64)}`,
      getTransfers: async () => {
        throw new Error('fetch failed: connect ECONNREFUSED');
      },
    } as unknown as Chain;
    const chains = {
      get: () => chain,
      network: () => ({ assets: [{ tokenAddress: '0x0000000000000000000000000000000000000001' }] }),
    } as unknown as ChainRegistry;
    await assert.rejects(scanRange({ chains, takers: [] }, { chainId: 1, fromBlock: '1' }), /ECONNREFUSED/);
  });

  test('providers\u2019 size refusals are recognised, also as the cause of a wrapping error', () => {
    for (const message of [
      'query returned more than 10000 results',
      'Log response size exceeded.',
      'eth_getLogs block range too large',
      'exceed maximum block range: 5000',
    ]) {
      assert.equal(isRangeTooLarge(new Error('RPC error', { cause: new Error(message) })), true, message);
    }
    assert.equal(isRangeTooLarge(new ResponseBodyTooLargeError({ maxSize: 10_485_760, size: 11_000_000 })), true);
    assert.equal(isRangeTooLarge(new Error('execution reverted')), false);
  });
});
