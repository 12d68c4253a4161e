import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Hash } from 'viem';
import { createChainRegistry } from '../../src/chain/registry';
import { RPC_TIMEOUT_MS, rpcTransport } from '../../src/chain/transport';
import type { Chain } from '../../src/chain/types';
import { loadEnvironments } from '../../src/config/environments';
import { startAnvil, type AnvilNode } from '../../src/embedded/anvil';
import { freePort } from '../../src/embedded/process';
import { jsonRpc, mined } from './helpers';

const CHAIN_ID = 31337;

/** The bundled sandbox network, its RPC URLs from the setting as a deployment gives them. */
function chainWith(urls: string[]): Chain {
  return createChainRegistry(loadEnvironments(undefined, { rpcUrls: { RPC_URLS_ANVIL: urls } })).get(CHAIN_ID);
}

async function fundedSigner(nodes: AnvilNode[]) {
  const signer = privateKeyToAccount(generatePrivateKey());
  for (const node of nodes) await jsonRpc(node.rpcUrl, 'anvil_setBalance', [signer.address, `0x${(10n ** 18n).toString(16)}`]);
  return signer;
}

const landedOn = async (node: AnvilNode, hash: Hash) => (await jsonRpc(node.rpcUrl, 'eth_getTransactionReceipt', [hash])) !== null;

describe('RPC failover across a network’s URLs', () => {
  let first: AnvilNode;
  let second: AnvilNode;
  before(async () => {
    [first, second] = await Promise.all([startAnvil({ port: 0 }), startAnvil({ port: 0 })]);
  });
  after(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
  });

  test('with the first URL dead, reads and a broadcast go to the next one', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const chain = chainWith([dead, second.rpcUrl]);
    await jsonRpc(second.rpcUrl, 'anvil_mine', ['0x5']);
    assert.equal(await chain.getBlockNumber(), BigInt((await jsonRpc(second.rpcUrl, 'eth_blockNumber')) as string));
    const signer = await fundedSigner([second]);
    const hash = await mined(
      chain,
      await chain.sendNative({ from: signer, to: privateKeyToAccount(generatePrivateKey()).address, amountWei: 1000n }),
    );
    assert.equal(await chain.getTransactionStatus(hash, 1), 'confirmed');
    assert.ok(await landedOn(second, hash));
  });

  test('a node killed mid-run: the calls after it go to the next URL', async () => {
    const chain = chainWith([first.rpcUrl, second.rpcUrl]);
    const signer = await fundedSigner([first, second]);
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const before = await mined(chain, await chain.sendNative({ from: signer, to, amountWei: 1n }));
    assert.ok(await landedOn(first, before), 'while it is up, the first URL serves');

    first.kill();
    const head = await chain.getBlockNumber();
    assert.equal(head, BigInt((await jsonRpc(second.rpcUrl, 'eth_blockNumber')) as string));
    const afterKill = await mined(chain, await chain.sendNative({ from: signer, to, amountWei: 2n }));
    assert.ok(await landedOn(second, afterKill));
    assert.equal(await chain.getNativeBalance(to), 2n);
  });

  test('every URL of the failover keeps the RPC timeout', () => {
    const transport = rpcTransport(['http://127.0.0.1:1', 'http://127.0.0.1:2'])({});
    const members = (transport.value as { transports: Array<{ config: { timeout?: number } }> }).transports;
    assert.equal(members.length, 2);
    for (const m of members) assert.equal(m.config.timeout, RPC_TIMEOUT_MS);
  });
});
