import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createPublicClient, erc20Abi, http, parseAbi } from 'viem';
import {
  SANDBOX_DEPLOYER,
  SANDBOX_TOKEN_ADDRESS,
  ensureSandboxToken,
  fundTestWallet,
  mintTo,
  sandboxTokenDeployment,
} from '../../src/chain/sandbox';
import { TEST_TOKEN_SOURCE, artifactCachePath, loadTestTokenArtifact } from '../../src/chain/token-artifact';
import { startAnvil } from '../../src/embedded/anvil';
import { createHdCustody } from '../../src/custody';
import { TEST_MNEMONIC, jsonRpc, startTestChain, type TestChain } from './helpers';

describe('sandbox token', () => {
  let t: TestChain;
  before(async () => {
    t = await startTestChain();
  });
  after(async () => {
    await t?.node.stop();
  });

  test('the compiled TestUSD still has the CREATE2 address the configuration names', () => {
    assert.equal(sandboxTokenDeployment().address, SANDBOX_TOKEN_ADDRESS);
    assert.equal(SANDBOX_TOKEN_ADDRESS, '0xf1108D9fDF3d265B59Bf6Ce7Bf240f99c071ffF5');
  });

  test('the token deploys at the fixed address with 6 decimals, USDC symbol and the deployer as minter', async () => {
    assert.equal(t.token, SANDBOX_TOKEN_ADDRESS);
    const client = createPublicClient({ transport: http(t.node.rpcUrl) });
    const read = <F extends 'decimals' | 'symbol' | 'name'>(functionName: F) =>
      client.readContract({ address: t.token, abi: erc20Abi, functionName });
    assert.equal(await read('decimals'), 6);
    assert.equal(await read('symbol'), 'USDC');
    assert.equal(await read('name'), 'Test USD');
    const minter = await client.readContract({
      address: t.token,
      abi: parseAbi(['function minter() view returns (address)']),
      functionName: 'minter',
    });
    assert.equal(minter, SANDBOX_DEPLOYER);
  });

  test('ensuring the token again reuses the deployed contract without sending a transaction', async () => {
    const before = await t.chain.getBlockNumber();
    const again = await ensureSandboxToken({ rpcUrl: t.node.rpcUrl });
    assert.equal(again.tokenAddress, SANDBOX_TOKEN_ADDRESS);
    assert.equal(await t.chain.getBlockNumber(), before);
  });

  test('minting credits the recipient in atomic units', async () => {
    const wallet = createHdCustody({ mnemonic: TEST_MNEMONIC }).deriveAddress({ purpose: 'deposit', index: 900 });
    await mintTo({ rpcUrl: t.node.rpcUrl, to: wallet, amountAtomic: 12_345_678n });
    assert.equal(await t.chain.getTokenBalance({ token: t.token, owner: wallet }), 12_345_678n);
  });

  test('nobody but the deployer can mint', async () => {
    const signer = createHdCustody({ mnemonic: TEST_MNEMONIC }).signer({ purpose: 'treasury', index: 0 });
    await fundTestWallet({ rpcUrl: t.node.rpcUrl, address: signer.address });
    const client = createPublicClient({ transport: http(t.node.rpcUrl) });
    await assert.rejects(
      client.simulateContract({
        account: signer,
        address: t.token,
        abi: parseAbi(['function mint(address to, uint256 value)']),
        functionName: 'mint',
        args: [signer.address, 1n],
      }),
      /not minter/,
    );
  });

  test('the token lands at the same address on a fresh chain whose dev account already sent transactions', async () => {
    const other = await startAnvil({ port: 0 });
    try {
      // With plain CREATE the address would follow the deployer's nonce; CREATE2 must not.
      await jsonRpc(other.rpcUrl, 'eth_sendTransaction', [{ from: SANDBOX_DEPLOYER, to: SANDBOX_DEPLOYER, value: '0x1' }]);
      const { tokenAddress } = await ensureSandboxToken({ rpcUrl: other.rpcUrl });
      assert.equal(tokenAddress, SANDBOX_TOKEN_ADDRESS);
    } finally {
      await other.stop();
    }
  });

  test('the compiled token is cached on disk under a hash of its source and compiler, with the same bytecode', () => {
    const cacheDir = mkdtempSync(path.join(os.tmpdir(), 'artifact-cache-'));
    try {
      const file = artifactCachePath(readFileSync(TEST_TOKEN_SOURCE, 'utf8'), cacheDir);
      assert.match(path.relative(cacheDir, file), /^contracts[/\\][0-9a-f]{64}\.json$/);
      assert.equal(existsSync(file), false);
      const compiled = loadTestTokenArtifact({ cacheDir });
      assert.equal(existsSync(file), true);
      assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')).bytecode, compiled.bytecode);
      assert.deepEqual(loadTestTokenArtifact({ cacheDir }), compiled);
      assert.deepEqual(loadTestTokenArtifact(), compiled); // same bytecode as the machine-wide cache
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });
});
