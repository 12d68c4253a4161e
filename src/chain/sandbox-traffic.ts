import { randomBytes } from 'node:crypto';
import { encodeFunctionData, erc20Abi, parseAbi, type Address, type Hash } from 'viem';
import { createChainFaults, jsonRpc } from './chain-faults';
import { SANDBOX_DEPLOYER, SANDBOX_TOKEN_ADDRESS } from './sandbox';

const MINT_ABI = parseAbi(['function mint(address to, uint256 value)']);

/** Gas for one plain ERC-20 transfer or mint, fixed: an estimate per transaction would cost anvil more than the transfer. */
const TRANSFER_GAS = 100_000n;

export interface TokenTransferOrder {
  from: Address;
  to: Address;
  amountAtomic: bigint;
}

/**
 * Wallets on a sandbox chain (anvil) that send real token transfers without signing: anvil
 * impersonates them. Cheap enough to put hundreds of Transfer logs of the configured token in every
 * block (the traffic a real USDC contract carries), from many senders.
 */
export interface TokenSenders {
  senders: Address[];
  /**
   * Broadcasts the transfers in one JSON-RPC batch (each sender's in the order given, by explicit
   * nonces), and answers their hashes in the same order. Mining is the caller's: with mining paused
   * they wait in the mempool for the next block.
   */
  send(orders: TokenTransferOrder[]): Promise<Hash[]>;
  /** Stops impersonating the senders. */
  release(): Promise<void>;
}

/** A random address nobody holds a key to: a foreign recipient. */
export function randomAddress(): Address {
  return `0x${randomBytes(20).toString('hex')}`;
}

/** `count` fresh senders, each with gas money and `tokenAtomicEach` of the token (minted in one block). */
export async function prepareTokenSenders(opts: {
  rpcUrl: string;
  count: number;
  tokenAtomicEach: bigint;
  token?: Address;
}): Promise<TokenSenders> {
  const token = opts.token ?? SANDBOX_TOKEN_ADDRESS;
  const senders = Array.from({ length: opts.count }, randomAddress);
  const nonces = new Map<Address, number>(senders.map((s) => [s, 0]));
  await rpcBatch(opts.rpcUrl, [
    ...senders.map((s) => ({ method: 'anvil_setBalance', params: [s, `0x${(10n ** 20n).toString(16)}`] })),
    ...senders.map((s) => ({ method: 'anvil_impersonateAccount', params: [s] })),
  ]);
  const faults = createChainFaults(opts.rpcUrl);
  await faults.withMiningPaused(async () => {
    const first = Number(await jsonRpc<string>(opts.rpcUrl, 'eth_getTransactionCount', [SANDBOX_DEPLOYER, 'pending']));
    const mints = senders.map((s, i) =>
      sendCall(
        SANDBOX_DEPLOYER,
        token,
        encodeFunctionData({ abi: MINT_ABI, functionName: 'mint', args: [s, opts.tokenAtomicEach] }),
        first + i,
      ),
    );
    await rpcBatch(opts.rpcUrl, mints);
    await faults.mine(1);
  });
  return {
    senders,
    async send(orders) {
      const calls = orders.map((o) => {
        const nonce = nonces.get(o.from);
        if (nonce === undefined) throw new Error(`${o.from} is not one of these senders`);
        nonces.set(o.from, nonce + 1);
        return sendCall(
          o.from,
          token,
          encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [o.to, o.amountAtomic] }),
          nonce,
        );
      });
      return (await rpcBatch(opts.rpcUrl, calls)) as Hash[];
    },
    async release() {
      await rpcBatch(
        opts.rpcUrl,
        senders.map((s) => ({ method: 'anvil_stopImpersonatingAccount', params: [s] })),
      );
    },
  };
}

function sendCall(from: Address, to: Address, data: string, nonce: number) {
  return {
    method: 'eth_sendTransaction',
    params: [{ from, to, data, gas: `0x${TRANSFER_GAS.toString(16)}`, nonce: `0x${nonce.toString(16)}` }],
  };
}

/** One JSON-RPC batch; answers the results in order, or throws the first error. */
async function rpcBatch(rpcUrl: string, calls: Array<{ method: string; params: unknown[] }>): Promise<unknown[]> {
  if (calls.length === 0) return [];
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(calls.map((c, id) => ({ jsonrpc: '2.0', id, ...c }))),
    signal: AbortSignal.timeout(60_000),
  });
  const answers = (await res.json()) as Array<{ id: number; result?: unknown; error?: { message: string } }>;
  const byId = new Map(answers.map((a) => [a.id, a]));
  return calls.map((c, id) => {
    const a = byId.get(id);
    if (!a || a.error) throw new Error(`${c.method}: ${a?.error?.message ?? 'no answer in the batch'}`);
    return a.result;
  });
}
