import assert from 'node:assert/strict';
import type { Address, Hash, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { fundTestWallet, SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { getHarness } from './harness';

/** A fresh payer wallet with test USDC (atomic units) and gas money. */
export async function newPayer(tokenAtomic: bigint): Promise<PrivateKeyAccount> {
  const h = await getHarness();
  const payer = privateKeyToAccount(generatePrivateKey());
  await fundTestWallet({ rpcUrl: h.rpcUrl, address: payer.address, tokenAtomic });
  return payer;
}

/** Sends test USDC on the sandbox chain and wakes the scanner, as `npm run cli -- sandbox pay` does. */
export async function payTo(payer: PrivateKeyAccount, to: string, amountAtomic: bigint): Promise<Hash> {
  const h = await getHarness();
  const chain = h.chain.chains.get(h.chainId);
  const txHash = await chain.sendTokenTransfer({ from: payer, token: SANDBOX_TOKEN_ADDRESS, to: to as Address, amountAtomic });
  // anvil may answer before its automined block is readable; the scanner must see the block.
  for (let i = 0; i < 200 && (await chain.getTransactionStatus(txHash, 1)) !== 'confirmed'; i += 1) {
    await new Promise((r) => setTimeout(r, 10));
  }
  await pokeScanner();
  return txHash;
}

export async function pokeScanner(): Promise<void> {
  const h = await getHarness();
  await h.engine.pokeChainScanner(h.chainId);
}

export async function rpc<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
  const h = await getHarness();
  const res = await fetch(h.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

export async function mine(blocks = 1): Promise<void> {
  await rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
}

export async function tokenBalance(owner: string): Promise<bigint> {
  const h = await getHarness();
  return h.chain.chains.get(h.chainId).getTokenBalance({ token: SANDBOX_TOKEN_ADDRESS, owner: owner as Address });
}

export async function setNativeBalance(address: string, wei: bigint): Promise<void> {
  await rpc('anvil_setBalance', [address, `0x${wei.toString(16)}`]);
}

/**
 * Polls until check() answers a value, mining a block each round so confirmations advance (or, with
 * `mine: false`, leaving the chain as it is). The test scanner polls hourly, so it is poked every 3 s
 * (every second when nothing is mined: pokes are then all that moves it). Never faster: each poke
 * is a workflow task that replays the scanner's run, and pokes faster than that kept it from ever
 * completing its continue-as-new (each new signal refuses the task that carries it).
 * A generous deadline, not a timing assertion: the failure message says what was last seen.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  what: string,
  opts: { timeoutMs?: number; mine?: boolean } = {},
): Promise<T> {
  const mining = opts.mine ?? true;
  const pokeEveryMs = mining ? 3000 : 1000;
  const deadline = Date.now() + (opts.timeoutMs ?? 90_000);
  let last: unknown;
  let poked = Date.now();
  for (;;) {
    const value = await check().catch((err: unknown) => {
      last = err;
      return undefined;
    });
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${String(last)}`);
    if (mining) await mine(1);
    if (Date.now() - poked >= pokeEveryMs) {
      await pokeScanner();
      poked = Date.now();
    }
    await new Promise((r) => setTimeout(r, 150));
  }
}

export type TransactionReceipt = { blockNumber: Hex; blockHash: Hex; logs: Array<{ logIndex: Hex }> };

/** The transaction's receipt, waited for briefly: a busy node may answer before it has one. */
export async function receiptOf(hash: Hex): Promise<TransactionReceipt> {
  for (let i = 0; i < 50; i += 1) {
    const receipt = await rpc<TransactionReceipt | null>('eth_getTransactionReceipt', [hash]);
    if (receipt) return receipt;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`transaction ${hash} was not mined`);
}
