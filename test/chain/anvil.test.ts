import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createEvmChain } from '../../src/chain/evm';
import { SANDBOX_TOKEN_ADDRESS, ensureSandboxToken, mintTo } from '../../src/chain/sandbox';
import { startAnvil, type AnvilNode } from '../../src/embedded/anvil';
import { jsonRpc } from './helpers';

describe('embedded anvil', () => {
  let node: AnvilNode;
  let dataDir: string;
  before(async () => {
    node = await startAnvil({ port: 0 });
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'anvil-state-'));
  });
  after(async () => {
    await node?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('a node on a free port answers JSON-RPC as chain 31337 and mines each transaction at once', async () => {
    assert.ok(node.port > 0);
    assert.equal(node.rpcUrl, `http://127.0.0.1:${node.port}`);
    assert.equal(await jsonRpc(node.rpcUrl, 'eth_chainId'), '0x7a69');
    assert.equal(await jsonRpc(node.rpcUrl, 'anvil_getAutomine'), true);
  });

  test('a second node cannot start on a port that is already taken', async () => {
    await assert.rejects(startAnvil({ port: node.port, startTimeoutMs: 10_000 }), /exited|in use/i);
  });

  test('a custom chain id and block time are honoured', async () => {
    const other = await startAnvil({ chainId: 1337, blockTime: 1 });
    try {
      assert.equal(await jsonRpc(other.rpcUrl, 'eth_chainId'), '0x539');
      assert.equal(await jsonRpc(other.rpcUrl, 'anvil_getAutomine'), false);
    } finally {
      await other.stop();
      await other.stop(); // idempotent
    }
  });

  test('with a state file, the token, balances and transfer logs survive a restart', async () => {
    const stateFile = path.join(dataDir, 'anvil', 'state.json');
    const recipient = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
    const first = await startAnvil({ stateFile });
    let mintHash: string;
    let mintedAt: bigint;
    try {
      await ensureSandboxToken({ rpcUrl: first.rpcUrl });
      mintHash = await mintTo({ rpcUrl: first.rpcUrl, to: recipient, amountAtomic: 42_000_000n });
      mintedAt = await createEvmChain({ chainId: 31337, rpcUrl: first.rpcUrl }).getBlockNumber();
    } finally {
      await first.stop();
    }
    assert.ok(statSync(stateFile).size > 0);

    const second = await startAnvil({ stateFile });
    try {
      const chain = createEvmChain({ chainId: 31337, rpcUrl: second.rpcUrl });
      assert.equal(await chain.getBlockNumber(), mintedAt);
      const before = await chain.getBlockNumber();
      await ensureSandboxToken({ rpcUrl: second.rpcUrl }); // reused, not redeployed
      assert.equal(await chain.getBlockNumber(), before);
      assert.equal(await chain.getTokenBalance({ token: SANDBOX_TOKEN_ADDRESS, owner: recipient }), 42_000_000n);
      const logs = await chain.getTransfers({ token: SANDBOX_TOKEN_ADDRESS, to: [recipient], fromBlock: 0n, toBlock: before });
      assert.deepEqual(
        logs.map((l) => l.txHash),
        [mintHash],
      );
    } finally {
      await second.stop();
    }
  });

  test('a shallow reorg on a long chain keeps every contract (older states are never written to disk without their code)', async () => {
    const long = await startAnvil({ port: 0 });
    try {
      await ensureSandboxToken({ rpcUrl: long.rpcUrl });
      // One block per call: anvil keeps a state per block, and moves older ones out of memory.
      for (let i = 0; i < 1_100; i += 1) await jsonRpc(long.rpcUrl, 'anvil_mine', ['0x1']);
      await jsonRpc(long.rpcUrl, 'anvil_reorg', [11, []]);
      const code = (await jsonRpc(long.rpcUrl, 'eth_getCode', [SANDBOX_TOKEN_ADDRESS, 'latest'])) as string;
      assert.ok(code.length > 2, `the token's code after the reorg: ${code}`);
    } finally {
      await long.stop();
    }
  });
});
