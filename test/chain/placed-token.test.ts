import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { erc20Abi, parseAbi, type Address } from 'viem';
import { createEvmChain } from '../../src/chain/evm';
import { mintTo, placeTestTokenAt, catalogTokenAddress, SANDBOX_DEPLOYER, SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { startAnvil, type AnvilNode } from '../../src/embedded/anvil';
import { jsonRpc } from './helpers';

const READ_ABI = parseAbi([
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function decimals() view returns (uint8)',
  'function minter() view returns (address)',
  'function totalSupply() view returns (uint256)',
]);

describe('The test token placed at real token addresses', () => {
  let node: AnvilNode;
  before(async () => {
    node = await startAnvil({ port: 0, chainId: 8453 });
  });
  after(() => node.stop());

  test('answers as the deployed token does, at USDC and EURC of Base: metadata, storage, mint, transfer and their logs', async () => {
    const [USDC, EURC] = [catalogTokenAddress('base', 'USDC'), catalogTokenAddress('base', 'EURC')];
    await placeTestTokenAt({ rpcUrl: node.rpcUrl, addresses: [USDC, EURC] });
    await placeTestTokenAt({ rpcUrl: node.rpcUrl, addresses: [USDC, EURC] }); // idempotent
    const chain = createEvmChain({ chainId: 8453, rpcUrl: node.rpcUrl });
    const { createPublicClient, http } = await import('viem');
    const client = createPublicClient({ transport: http(node.rpcUrl) });
    // The constructor writes no storage: the deployed token's first slots equal the placed one's (all zero).
    for (const slot of [0n, 1n, 2n]) {
      const at = (a: Address) => client.getStorageAt({ address: a, slot: `0x${slot.toString(16)}` });
      assert.equal(await at(USDC), await at(SANDBOX_TOKEN_ADDRESS));
    }
    for (const token of [USDC, EURC]) {
      const read = <T>(functionName: 'name' | 'symbol' | 'decimals' | 'minter' | 'totalSupply') =>
        client.readContract({ address: token, abi: READ_ABI, functionName }) as Promise<T>;
      assert.equal(await read<number>('decimals'), 6);
      assert.equal(await read<string>('minter'), SANDBOX_DEPLOYER);
      assert.equal(await read<bigint>('totalSupply'), 0n);
      assert.equal(await read<string>('name'), 'Test USD');
    }
    const payer = '0x00000000000000000000000000000000000000a1' as Address;
    const mintHash = await mintTo({ rpcUrl: node.rpcUrl, to: SANDBOX_DEPLOYER, amountAtomic: 5_000_000n, token: EURC });
    const { createWalletClient } = await import('viem');
    const wallet = createWalletClient({ transport: http(node.rpcUrl), account: SANDBOX_DEPLOYER });
    const hash = await wallet.writeContract({
      chain: null,
      address: EURC,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [payer, 2_000_000n],
    });
    await client.waitForTransactionReceipt({ hash });
    assert.equal(await chain.getTokenBalance({ token: EURC, owner: payer }), 2_000_000n);
    assert.equal(await chain.getTokenBalance({ token: EURC, owner: SANDBOX_DEPLOYER }), 3_000_000n);
    // Each placed token keeps its own state.
    assert.equal(await chain.getTokenBalance({ token: USDC, owner: payer }), 0n);
    const head = await chain.getBlockNumber();
    const logs = await chain.getTransfers({ token: EURC, to: undefined, fromBlock: 0n, toBlock: head });
    assert.deepEqual(
      logs.map((l) => ({
        token: l.token.toLowerCase(),
        from: l.from.toLowerCase(),
        to: l.to.toLowerCase(),
        amount: l.amountAtomic,
        tx: l.txHash,
      })),
      [
        {
          token: EURC.toLowerCase(),
          from: '0x0000000000000000000000000000000000000000',
          to: SANDBOX_DEPLOYER.toLowerCase(),
          amount: 5_000_000n,
          tx: mintHash,
        },
        { token: EURC.toLowerCase(), from: SANDBOX_DEPLOYER.toLowerCase(), to: payer, amount: 2_000_000n, tx: hash },
      ],
    );
    assert.equal(Number(await jsonRpc(node.rpcUrl, 'eth_chainId')), 8453);
  });
});
