import { createWalletClient, encodeFunctionData, erc20Abi, http, type Address, type Hash, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createChainFaults, type ChainFaults } from '../../src/chain/chain-faults';
import { createEvmChain } from '../../src/chain/evm';
import { ensureSandboxToken, fundTestWallet } from '../../src/chain/sandbox';
import type { Chain } from '../../src/chain/types';
import { startAnvil, type AnvilNode } from '../../src/embedded/anvil';

/**
 * An anvil node of its own with the sandbox token and the fault kit, for tests whose faults (paused
 * mining, reorgs, dropped transactions) must not reach the harness chain that every other test file,
 * the chain scanner and the Payment workflows share. Automining, like the harness chain.
 */
export interface FaultyChain {
  node: AnvilNode;
  rpcUrl: string;
  chain: Chain;
  faults: ChainFaults;
  token: Address;
  /** A fresh wallet with test USDC (atomic units) and gas money. Fund before pausing: it waits to be mined. */
  newPayer(tokenAtomic: bigint): Promise<PrivateKeyAccount>;
  /** Broadcasts a token transfer (mined at once unless mining is paused). */
  transfer(from: PrivateKeyAccount, to: Address, amountAtomic: bigint): Promise<Hash>;
  /** Signs a token transfer without broadcasting it, e.g. to put it first in a re-mined block. */
  signTransfer(from: PrivateKeyAccount, to: Address, amountAtomic: bigint): Promise<Hex>;
  /** anvil answers a broadcast before its automined block is readable: waits for the receipt. */
  mined(txHash: Hash): Promise<Hash>;
  balance(owner: Address): Promise<bigint>;
  stop(): Promise<void>;
}

export async function startFaultyChain(): Promise<FaultyChain> {
  const node = await startAnvil({ port: 0 });
  try {
    const { tokenAddress: token } = await ensureSandboxToken({ rpcUrl: node.rpcUrl });
    const chain = createEvmChain({ chainId: node.chainId, rpcUrl: node.rpcUrl });
    const faults = createChainFaults(node.rpcUrl);
    return {
      node,
      rpcUrl: node.rpcUrl,
      chain,
      faults,
      token,
      async newPayer(tokenAtomic) {
        const payer = privateKeyToAccount(generatePrivateKey());
        await fundTestWallet({ rpcUrl: node.rpcUrl, address: payer.address, tokenAtomic });
        return payer;
      },
      transfer: (from, to, amountAtomic) => chain.sendTokenTransfer({ from, token, to, amountAtomic }),
      async signTransfer(from, to, amountAtomic) {
        // A fixed, generous gas limit: an estimate made now may be too low for the state the
        // transaction is mined in later (a zero balance costs more to write than a non-zero one).
        const wallet = createWalletClient({ account: from, transport: http(node.rpcUrl) });
        const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amountAtomic] });
        const request = await wallet.prepareTransactionRequest({ chain: null, to: token, data, gas: 100_000n });
        return wallet.signTransaction({ ...request, chain: null });
      },
      async mined(txHash) {
        for (let i = 0; i < 500; i += 1) {
          if (await faults.position(txHash)) return txHash;
          await new Promise((r) => setTimeout(r, 10));
        }
        throw new Error(`${txHash} was not mined`);
      },
      balance: (owner) => chain.getTokenBalance({ token, owner }),
      stop: () => node.stop(),
    };
  } catch (err) {
    await node.stop();
    throw err;
  }
}

/** A fresh address nobody holds a key for: a recipient whose balance only the test moves. */
export function freshAddress(): Address {
  return privateKeyToAccount(generatePrivateKey()).address;
}
