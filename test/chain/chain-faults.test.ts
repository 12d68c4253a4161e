import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createPublicClient, http, type Hash } from 'viem';
import { ChainFaultError } from '../../src/chain/chain-faults';
import { freshAddress, startFaultyChain, type FaultyChain } from '../support/chain-faults';

/**
 * The chain-fault kit (src/chain/chain-faults.ts) on an anvil node of this file's own: each test
 * proves the fault really happens on the chain, read back through the service's own Chain client.
 */
describe('chain faults on anvil', () => {
  let t: FaultyChain;
  before(async () => {
    t = await startFaultyChain();
  });
  after(async () => {
    await t?.stop();
  });

  const transfersIn = (blockNumber: bigint) =>
    t.chain.getTransfers({ token: t.token, to: undefined, fromBlock: blockNumber, toBlock: blockNumber });

  test('paused mining keeps a sent transfer pending, with no new block, until N blocks are mined', async () => {
    const payer = await t.newPayer(10_000_000n);
    const to = freshAddress();
    await t.faults.pauseMining();
    try {
      assert.deepEqual(await t.faults.miningMode(), { mode: 'paused' });
      const head = await t.faults.head();
      const hash = await t.transfer(payer, to, 1_000_000n);

      assert.deepEqual(await t.faults.pendingTransactions(), [hash]);
      assert.equal(await t.faults.position(hash), null);
      assert.equal(await t.chain.getTransactionStatus(hash, 1), 'pending');
      assert.equal((await t.faults.head()).number, head.number);
      assert.equal(await t.balance(to), 0n);

      const mined = await t.faults.mine(3);
      assert.equal(mined.number, head.number + 3n);
      assert.equal((await t.faults.position(hash))?.blockNumber, head.number + 1n);
      assert.deepEqual(await t.faults.pendingTransactions(), []);
      assert.equal(await t.balance(to), 1_000_000n);
    } finally {
      await t.faults.resumeMining();
    }
    assert.deepEqual(await t.faults.miningMode(), { mode: 'automine' });
  });

  test('interval mining resumes with the asked interval and pausing stops it', async () => {
    assert.deepEqual(await t.faults.resumeMining({ intervalSeconds: 1 }), { mode: 'interval', seconds: 1 });
    assert.deepEqual(await t.faults.miningMode(), { mode: 'interval', seconds: 1 });
    await t.faults.pauseMining();
    assert.deepEqual(await t.faults.miningMode(), { mode: 'paused' });
    await t.faults.resumeMining();
    assert.deepEqual(await t.faults.miningMode(), { mode: 'automine' });
  });

  test('several transfers land in one block, in the order sent, at log indexes 0, 1, 2', async () => {
    const payers = [await t.newPayer(5_000_000n), await t.newPayer(5_000_000n), await t.newPayer(5_000_000n)];
    const to = freshAddress();
    const { block, positions } = await t.faults.inOneBlock(async () => {
      const hashes: Hash[] = [];
      for (const [i, payer] of payers.entries()) hashes.push(await t.transfer(payer, to, BigInt(i + 1)));
      return hashes;
    });
    assert.deepEqual(new Set(positions.map((p) => p.blockHash)), new Set([block.hash]));
    const found = await transfersIn(block.number);
    assert.deepEqual(
      found.map((x) => [x.txHash, x.logIndex, x.amountAtomic]),
      positions.map((p, i) => [p.txHash, i, BigInt(i + 1)]),
    );
    assert.equal(await t.balance(to), 6n);
    assert.deepEqual(await t.faults.miningMode(), { mode: 'automine' }, 'the mode it found is restored');
  });

  test('a reorg of depth 3 replaces the last 3 blocks: new hashes at those heights, their transfers gone', async () => {
    const payer = await t.newPayer(10_000_000n);
    const to = freshAddress();
    const hash = await t.mined(await t.transfer(payer, to, 4_000_000n));
    const minedAt = (await t.faults.position(hash))!;
    const top = await t.faults.mine(2);
    assert.equal((await t.chain.getTransfers({ token: t.token, to: [to], fromBlock: minedAt.blockNumber, toBlock: top.number })).length, 1);

    const reorg = await t.faults.reorg(3);

    assert.deepEqual(
      reorg.replaced.map((r) => r.number),
      [minedAt.blockNumber, minedAt.blockNumber + 1n, minedAt.blockNumber + 2n],
    );
    assert.equal(reorg.replaced[0]!.oldHash, minedAt.blockHash);
    for (const r of reorg.replaced) {
      assert.notEqual(r.newHash, r.oldHash);
      assert.equal((await t.chain.getTransfers({ token: t.token, to: undefined, fromBlock: r.number, toBlock: r.number })).length, 0);
    }
    assert.equal(reorg.head.number, top.number, 'the height stays');
    assert.notEqual(reorg.head.hash, top.hash);
    assert.deepEqual(reorg.dropped, [hash]);
    assert.deepEqual(reorg.included, []);

    // What the service sees: the transfer is unknown, its log gone, the balance back.
    assert.equal(await t.faults.position(hash), null);
    assert.deepEqual(await t.chain.verifyTransfer({ txHash: hash, logIndex: 0, token: t.token, to, confirmations: 1 }), {
      status: 'not_found',
      reason: 'unknown_transaction',
    });
    assert.deepEqual(
      await t.chain.getTransfers({ token: t.token, to: [to], fromBlock: minedAt.blockNumber, toBlock: reorg.head.number }),
      [],
    );
    assert.equal(await t.balance(to), 0n);
    assert.equal(await t.balance(payer.address), 10_000_000n);
  });

  test('a reorg can re-include a transaction in another new block: same hash, another block, the old receipt not canonical', async () => {
    const payer = await t.newPayer(10_000_000n);
    const to = freshAddress();
    const hash = await t.mined(await t.transfer(payer, to, 2_000_000n));
    const before = (await t.faults.position(hash))!;
    await t.faults.mine(1);

    const reorg = await t.faults.reorg(2, { include: [{ txHash: hash, block: 1 }] });

    const after = (await t.faults.position(hash))!;
    assert.equal(after.blockNumber, before.blockNumber + 1n);
    assert.notEqual(after.blockHash, before.blockHash);
    assert.deepEqual(reorg.included, [hash]);
    assert.deepEqual(reorg.dropped, []);
    assert.equal(
      (await t.chain.getTransfers({ token: t.token, to: [to], fromBlock: before.blockNumber, toBlock: before.blockNumber })).length,
      0,
    );
    const moved = await t.chain.getTransfers({ token: t.token, to: [to], fromBlock: after.blockNumber, toBlock: after.blockNumber });
    assert.deepEqual(
      moved.map((x) => [x.txHash, x.blockHash]),
      [[hash, after.blockHash]],
    );
    assert.equal(await t.balance(to), 2_000_000n, 'paid once, not twice');
  });

  test('a reorg that re-includes everything keeps every transaction and log index but changes every block hash', async () => {
    const payer = await t.newPayer(10_000_000n);
    const to = freshAddress();
    const first = await t.mined(await t.transfer(payer, to, 1n));
    const second = await t.mined(await t.transfer(payer, to, 2n));
    const before = [(await t.faults.position(first))!, (await t.faults.position(second))!];

    const reorg = await t.faults.reorg(2, { reincludeAll: true });

    const after = [(await t.faults.position(first))!, (await t.faults.position(second))!];
    assert.deepEqual(
      after.map((p) => [p.blockNumber, p.transactionIndex, p.logIndexes]),
      before.map((p) => [p.blockNumber, p.transactionIndex, p.logIndexes]),
    );
    assert.ok(after.every((p, i) => p.blockHash !== before[i]!.blockHash));
    assert.deepEqual(reorg.dropped, []);
    assert.deepEqual(reorg.included, [first, second]);
    assert.equal(await t.balance(to), 3n);
  });

  test('re-mining a transfer moves it to the next block behind another transfer: same hash, new block, new log index', async () => {
    const payer = await t.newPayer(10_000_000n);
    const other = await t.newPayer(10_000_000n);
    const to = freshAddress();
    const hash = await t.mined(await t.transfer(payer, to, 3_000_000n));
    const ahead = await t.signTransfer(other, to, 7n);

    const { before, after } = await t.faults.remine(hash, { blocksLater: 1, precededBy: [ahead] });

    assert.equal(after.txHash, hash);
    assert.equal(after.blockNumber, before.blockNumber + 1n);
    assert.notEqual(after.blockHash, before.blockHash);
    assert.deepEqual(before.logIndexes, [0]);
    assert.deepEqual(after.logIndexes, [1]);
    const found = await transfersIn(after.blockNumber);
    assert.deepEqual(
      found.map((x) => [x.from, x.logIndex, x.amountAtomic]),
      [
        [other.address, 0, 7n],
        [payer.address, 1, 3_000_000n],
      ],
    );
    assert.deepEqual(await t.chain.verifyTransfer({ txHash: hash, logIndex: 0, token: t.token, to, confirmations: 1 }), {
      status: 'not_found',
      reason: 'no_such_log',
    });
    assert.equal((await t.chain.verifyTransfer({ txHash: hash, logIndex: 1, token: t.token, to, confirmations: 1 })).status, 'confirmed');
    assert.equal(await t.balance(to), 3_000_007n);
  });

  test('re-mining in place behind another transfer keeps the height and moves the log index', async () => {
    const payer = await t.newPayer(10_000_000n);
    const other = await t.newPayer(10_000_000n);
    const to = freshAddress();
    const hash = await t.mined(await t.transfer(payer, to, 5n));
    await t.faults.mine(1);

    const { before, after } = await t.faults.remine(hash, { precededBy: [await t.signTransfer(other, to, 6n)] });

    assert.equal(after.blockNumber, before.blockNumber);
    assert.notEqual(after.blockHash, before.blockHash);
    assert.deepEqual([before.transactionIndex, after.transactionIndex], [0, 1]);
    assert.deepEqual(after.logIndexes, [1]);
  });

  test('a dropped pending transfer is unknown to the node and never mined', async () => {
    const payer = await t.newPayer(10_000_000n);
    const to = freshAddress();
    await t.faults.withMiningPaused(async () => {
      const hash = await t.transfer(payer, to, 9_000_000n);
      assert.equal(await t.chain.getTransactionStatus(hash, 1), 'pending');

      await t.faults.dropTransaction(hash);

      assert.deepEqual(await t.faults.pendingTransactions(), []);
      assert.equal(await t.chain.getTransactionStatus(hash, 1), 'not_found');
      await t.faults.mine(1);
      assert.equal(await t.chain.getTransactionStatus(hash, 1), 'not_found');
    });
    assert.equal(await t.balance(to), 0n);
    assert.equal(await t.balance(payer.address), 10_000_000n);
  });

  test('a fee spike drops no pending transfer: one priced under it is mined first, at the fee it found', async () => {
    const payer = await t.newPayer(10_000_000n);
    const to = freshAddress();
    const spikeWei = 150n * 1_000_000_000n;
    await t.faults.pauseMining();
    const pending = await t.transfer(payer, to, 7_000_000n);
    assert.equal(await t.chain.getTransactionStatus(pending, 1), 'pending');

    const hold = await t.faults.holdBaseFee(spikeWei);
    try {
      assert.ok(hold.baselineWei < spikeWei, `the baseline ${hold.baselineWei} is under the spike`);
      const mined = await t.faults.position(pending);
      assert.ok(mined, 'the pending transfer was mined, not dropped');
      const { baseFeePerGas } = await createPublicClient({ transport: http(t.rpcUrl) }).getBlock({ blockNumber: mined.blockNumber });
      assert.ok(baseFeePerGas! < spikeWei, `mined in a block at ${baseFeePerGas}, under the spike`);
      assert.equal(await t.chain.getBaseFee(), spikeWei);
    } finally {
      await hold.release();
      await t.faults.resumeMining();
    }
    assert.equal(await t.balance(to), 7_000_000n);
    assert.equal(await t.chain.getBaseFee(), hold.baselineWei, 'the fee set back');
    assert.deepEqual(await t.faults.miningMode(), { mode: 'automine' });
  });

  test('refuses what it cannot do: a reorg past genesis, dropping a mined transaction, re-mining an unknown one', async () => {
    const head = await t.faults.head();
    await assert.rejects(t.faults.reorg(Number(head.number) + 1), ChainFaultError);
    const payer = await t.newPayer(1n);
    const mined = await t.mined(await t.transfer(payer, freshAddress(), 1n));
    await assert.rejects(t.faults.dropTransaction(mined), /not pending/);
    await assert.rejects(t.faults.remine(`0x${'ab'.repeat(32)}`), /not mined/);
    assert.deepEqual(await t.faults.miningMode(), { mode: 'automine' }, 'a refused fault leaves the mode as it was');
  });
});
