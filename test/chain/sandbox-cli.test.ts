import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getAddress } from 'viem';
import { jsonRpc } from '../../src/chain/chain-faults';
import { SANDBOX_DEPLOYER, SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { startAnvil } from '../../src/embedded/anvil';
import { freshAddress, startFaultyChain, type FaultyChain } from '../support/chain-faults';
import { CliExit, runCli } from '../support/cli';

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

/**
 * The sandbox CLI as a partner runs it (`npm run cli -- sandbox ...`), run in this process, against an
 * anvil node of this file's own in the place of `npm start`'s sandbox chain (EMBEDDED_ANVIL_PORT), so
 * its paused mining and reorgs never reach the harness chain. The chain is then read directly.
 */
describe('sandbox CLI: transfers and chain faults', () => {
  let t: FaultyChain;
  before(async () => {
    t = await startFaultyChain();
  });
  after(async () => {
    await t?.stop();
  });

  async function cli(args: string[], port = t.node.port): Promise<CliResult> {
    try {
      const { stdout, stderr } = await runCli(['sandbox', ...args], { EMBEDDED_ANVIL_PORT: String(port) });
      const lines = stdout.trim().split('\n');
      assert.equal(lines.length, 1, `one JSON object on stdout: ${stdout}`);
      return { code: 0, stdout, stderr, json: JSON.parse(lines[0]!) };
    } catch (err) {
      if (!(err instanceof CliExit)) throw err;
      return { code: err.code, stdout: err.stdout, stderr: err.stderr, json: undefined };
    }
  }

  test('transfer mints test USDC to the sandbox payer and moves it to the address (answered checksummed), mined, scanner poked', async () => {
    const to = freshAddress();
    const res = await cli(['transfer', '--to', to.toLowerCase(), '--amount', '12.5']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(await t.balance(to), 12_500_000n);
    const position = await t.faults.position(res.json.txHash);
    assert.ok(position, 'the transfer is mined');
    assert.deepEqual(res.json, {
      chainId: 31337,
      token: { symbol: 'USDC', address: SANDBOX_TOKEN_ADDRESS },
      from: SANDBOX_DEPLOYER,
      to: getAddress(to),
      amount: '12.5',
      amountAtomic: '12500000',
      txHash: res.json.txHash,
      status: 'mined',
      blockNumber: Number(position.blockNumber),
      scannerPoked: true,
    });
    const [transfer] = await t.chain.getTransfers({
      token: t.token,
      to: [to],
      fromBlock: position.blockNumber,
      toBlock: position.blockNumber,
    });
    assert.equal(transfer?.from, SANDBOX_DEPLOYER);
    assert.equal(transfer?.amountAtomic, 12_500_000n);
  });

  test('pause-mining keeps a sandbox transfer pending, with no new block, until sandbox mine', async () => {
    const to = freshAddress();
    const paused = await cli(['pause-mining']);
    try {
      assert.equal(paused.code, 0, paused.stderr);
      assert.deepEqual(paused.json.mining, { mode: 'paused' });
      assert.deepEqual(await t.faults.miningMode(), { mode: 'paused' });
      const head = await t.faults.head();

      const sent = await cli(['transfer', '--to', to, '--amount', '3']);
      assert.equal(sent.code, 0, sent.stderr);
      assert.equal(sent.json.status, 'pending');
      assert.equal(sent.json.blockNumber, null);
      assert.equal(await t.faults.position(sent.json.txHash), null);
      assert.ok((await t.faults.pendingTransactions()).includes(sent.json.txHash));
      assert.equal(await t.balance(to), 0n);
      assert.equal((await t.faults.head()).number, head.number);

      const mined = await cli(['mine', '--blocks', '2']);
      assert.equal(mined.code, 0, mined.stderr);
      assert.equal(mined.json.mined, 2);
      assert.equal(mined.json.head.number, Number(head.number) + 2);
      assert.equal((await t.faults.position(sent.json.txHash))?.blockNumber, head.number + 1n);
      assert.equal(await t.balance(to), 3_000_000n);
    } finally {
      await t.faults.resumeMining();
    }
  });

  test('resume-mining returns to a block a second, as npm start runs the sandbox; --interval 0 to a block per transaction', async () => {
    await t.faults.pauseMining();
    try {
      const resumed = await cli(['resume-mining']);
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.deepEqual(resumed.json.mining, { mode: 'interval', seconds: 1 });
      assert.deepEqual(await t.faults.miningMode(), { mode: 'interval', seconds: 1 });
      const automine = await cli(['resume-mining', '--interval', '0']);
      assert.deepEqual(automine.json.mining, { mode: 'automine' });
      assert.deepEqual(await t.faults.miningMode(), { mode: 'automine' });
    } finally {
      await t.faults.resumeMining();
    }
  });

  test('reorg --depth 2 replaces the last 2 blocks, prints their old and new hashes and the head, and the transfer in them is gone', async () => {
    const payer = await t.newPayer(5_000_000n);
    const to = freshAddress();
    const hash = await t.mined(await t.transfer(payer, to, 5_000_000n));
    const minedAt = (await t.faults.position(hash))!;
    const top = await t.faults.mine(1);

    const res = await cli(['reorg', '--depth', '2']);

    assert.equal(res.code, 0, res.stderr);
    const now = await Promise.all(
      [minedAt.blockNumber, top.number].map((n) => t.chain.getTransfers({ token: t.token, to: undefined, fromBlock: n, toBlock: n })),
    );
    assert.deepEqual(now, [[], []]);
    const newHead = await t.faults.head();
    assert.deepEqual(res.json.head, { number: Number(top.number), hash: newHead.hash });
    assert.notEqual(newHead.hash, top.hash);
    assert.deepEqual(
      res.json.replaced.map((r: any) => [r.number, r.oldHash]),
      [
        [Number(minedAt.blockNumber), minedAt.blockHash],
        [Number(top.number), top.hash],
      ],
    );
    assert.equal(res.json.replaced[1].newHash, newHead.hash);
    assert.notEqual(res.json.replaced[0].newHash, minedAt.blockHash);
    assert.deepEqual(res.json.dropped, [hash]);
    assert.equal(await t.faults.position(hash), null);
    assert.equal(await t.balance(to), 0n);
    assert.equal(await t.balance(payer.address), 5_000_000n);
  });

  test('reorg --reinclude mines the replaced transactions again: same hash, new block hash, balance kept', async () => {
    const payer = await t.newPayer(1_000_000n);
    const to = freshAddress();
    const hash = await t.mined(await t.transfer(payer, to, 1_000_000n));
    const before = (await t.faults.position(hash))!;

    const res = await cli(['reorg', '--depth', '1', '--reinclude']);

    assert.equal(res.code, 0, res.stderr);
    const after = (await t.faults.position(hash))!;
    assert.equal(after.blockNumber, before.blockNumber);
    assert.notEqual(after.blockHash, before.blockHash);
    assert.deepEqual(res.json.reincluded, [hash]);
    assert.deepEqual(res.json.dropped, []);
    assert.equal(await t.balance(to), 1_000_000n);
  });

  test('refuses a call without --depth or with a mistyped address (exit 2), and a node that is not the sandbox chain (exit 1), changing nothing', async () => {
    const head = await t.faults.head();
    const noDepth = await cli(['reorg']);
    assert.equal(noDepth.code, 2);
    assert.equal(noDepth.stdout, '');
    assert.match(noDepth.stderr, /needs --depth/);

    // anvil's dev account 1 (0x70997970C51812dc3A010C7d01b50e0d17dc79C8) with one letter's case flipped.
    const mistyped = await cli(['transfer', '--to', '0x70997970c51812dc3A010C7d01b50e0d17dc79C8', '--amount', '1']);
    assert.equal(mistyped.code, 2, mistyped.stderr);
    assert.match(mistyped.stderr, /EIP-55 checksum/);
    assert.equal((await t.faults.head()).hash, head.hash, 'nothing was sent');

    const other = await startAnvil({ port: 0, chainId: 1337 });
    try {
      const res = await cli(['pause-mining'], other.port);
      assert.equal(res.code, 1);
      assert.match(res.stderr, /chain 1337, not the sandbox chain 31337/);
      assert.equal(await jsonRpc(other.rpcUrl, 'anvil_getAutomine'), true, 'the other node still mines');
    } finally {
      await other.stop();
    }
  });
});
