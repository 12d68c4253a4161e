import { createEvmChain } from '../../src/chain/evm';
import { ensureSandboxToken } from '../../src/chain/sandbox';
import type { Chain } from '../../src/chain/types';
import { startAnvil, type AnvilNode } from '../../src/embedded/anvil';
import type { Address } from 'viem';
import { until } from '../support/until';

/** A fresh anvil on a free port with the sandbox token deployed: what each chain test file starts. */
export interface TestChain {
  node: AnvilNode;
  chain: Chain;
  token: Address;
  rpc: (method: string, params?: unknown[]) => Promise<unknown>;
  /** Mines `blocks` empty blocks, e.g. to reach a confirmation depth. */
  mine: (blocks: number) => Promise<void>;
}

export async function startTestChain(): Promise<TestChain> {
  const node = await startAnvil({ port: 0 });
  try {
    const { tokenAddress } = await ensureSandboxToken({ rpcUrl: node.rpcUrl });
    const rpc = (method: string, params: unknown[] = []) => jsonRpc(node.rpcUrl, method, params);
    return {
      node,
      chain: createEvmChain({ chainId: node.chainId, rpcUrl: node.rpcUrl }),
      token: tokenAddress,
      rpc,
      mine: async (blocks) => {
        await rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
      },
    };
  } catch (err) {
    await node.stop();
    throw err;
  }
}

export async function jsonRpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** A fixed, well-known test mnemonic (not anvil's), so custody-derived addresses are reproducible. */
export const TEST_MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

/** anvil answers eth_sendRawTransaction before its automined block is always readable: wait for it. */
export async function mined(
  chain: { getTransactionStatus(hash: `0x${string}`, confirmations: number): Promise<string> },
  hash: `0x${string}`,
): Promise<`0x${string}`> {
  await until(async (saw) => {
    const status = await chain.getTransactionStatus(hash, 1);
    saw(status);
    return status !== 'pending' && status !== 'not_found';
  }, `${hash} mined`);
  return hash;
}
