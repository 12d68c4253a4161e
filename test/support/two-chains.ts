import type { Address, Hash } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { TEnvironments, TNetworkConfig } from '../../src/config/environments';
import { catalogTokenAddress, fundTestWallet, placeTestTokenAt } from '../../src/chain/sandbox';
import { expandCatalogNetwork } from '../../src/config/network-settings';
import { reconcileLedger } from '../../src/domain/ledger/reconcile';
import { startAnvil, type AnvilNode } from '../../src/embedded/anvil';
import { getHarness } from './harness';
import { poll, until, type Check } from './until';
import { jsonRpc } from '../chain/helpers';

/**
 * Two local chains shaped as production: anvil nodes with the chain ids of Base (8453) and Ethereum
 * (1), the test token's code at the real USDC and EURC addresses of each. The harness's production
 * environment runs on them (the sandbox stays on 31337).
 */
export const TWO_CHAINS = [
  { code: 'base', name: 'Base', chainId: 8453 },
  { code: 'ethereum', name: 'Ethereum', chainId: 1 },
] as const;
export type TwoChainId = (typeof TWO_CHAINS)[number]['chainId'];

export interface TwoChains {
  nodes: Record<TwoChainId, AnvilNode>;
  networks: TNetworkConfig[];
  /** Mines blocks on one of the chains. */
  mine(chainId: TwoChainId, blocks?: number): Promise<void>;
  stop(): Promise<void>;
}

/** The token address of an asset on one of the two chains. */
export function realToken(chainId: TwoChainId, symbol: 'USDC' | 'EURC'): Address {
  return catalogTokenAddress(TWO_CHAINS.find((c) => c.chainId === chainId)!.code, symbol);
}

/**
 * The two networks as an environment carries them: the catalog's, turned on by code with USDC (the
 * default) and EURC, as a deployment's environments file does; confirmations 2, as on the sandbox chain.
 */
export function twoChainNetworks(rpcUrls: Record<TwoChainId, string>): TNetworkConfig[] {
  return TWO_CHAINS.map((c) => {
    const network = expandCatalogNetwork({ code: c.code, assets: ['USDC', 'EURC'], confirmations: 2 }, [rpcUrls[c.chainId]]);
    return { ...network, rpcUrl: rpcUrls[c.chainId] };
  });
}

/** Starts both nodes and places the tokens. */
export async function startTwoChains(): Promise<TwoChains> {
  const started = await Promise.allSettled(TWO_CHAINS.map((c) => startAnvil({ port: 0, chainId: c.chainId })));
  const up = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const stop = async () => void (await Promise.all(up.map((n) => n.stop())));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  const nodes = Object.fromEntries(up.map((n) => [n.chainId, n])) as Record<TwoChainId, AnvilNode>;
  for (const c of TWO_CHAINS) {
    await placeTestTokenAt({ rpcUrl: nodes[c.chainId].rpcUrl, addresses: [realToken(c.chainId, 'USDC'), realToken(c.chainId, 'EURC')] });
  }
  const mine = async (chainId: TwoChainId, blocks = 1) => void (await jsonRpc(nodes[chainId].rpcUrl, 'anvil_mine', [`0x${blocks.toString(16)}`]));
  return { nodes, networks: twoChainNetworks({ 8453: nodes[8453].rpcUrl, 1: nodes[1].rpcUrl }), mine, stop };
}

/** The environments with the production environment on the two chains (its modules unchanged). */
export function withTwoChainProduction(envs: TEnvironments, networks: TNetworkConfig[]): TEnvironments {
  return { ...envs, environments: { ...envs.environments, production: { ...envs.environments.production, networks } } };
}

/** A fresh payer on one of the two chains with `tokenAtomic` of the asset and gas money. */
export async function newPayerOn(chainId: TwoChainId, symbol: 'USDC' | 'EURC', tokenAtomic: bigint): Promise<PrivateKeyAccount> {
  const h = await getHarness();
  const payer = privateKeyToAccount(generatePrivateKey());
  await fundTestWallet({ rpcUrl: h.twoChains.nodes[chainId].rpcUrl, address: payer.address, tokenAtomic, token: realToken(chainId, symbol) });
  return payer;
}

/** Sends the asset on that chain, waits for its block and pokes that chain's scanner. */
export async function payOn(chainId: TwoChainId, symbol: 'USDC' | 'EURC', payer: PrivateKeyAccount, to: string, amountAtomic: bigint): Promise<Hash> {
  const h = await getHarness();
  const chain = h.chain.chains.get(chainId);
  const txHash = await chain.sendTokenTransfer({ from: payer, token: realToken(chainId, symbol), to: to as Address, amountAtomic });
  await until(async (saw) => {
    const status = await chain.getTransactionStatus(txHash, 1);
    saw(status);
    return status === 'confirmed';
  }, `the block of ${txHash} on chain ${chainId}`);
  await h.engine.pokeChainScanner(chainId);
  return txHash;
}

export async function balanceOn(chainId: TwoChainId, symbol: 'USDC' | 'EURC', owner: string): Promise<bigint> {
  const h = await getHarness();
  return h.chain.chains.get(chainId).getTokenBalance({ token: realToken(chainId, symbol), owner: owner as Address });
}

/**
 * Polls until check() answers a value, mining a block on both chains each round and poking both
 * scanners every 3 s (as test/support/chain.ts eventually does for the sandbox chain).
 */
export async function eventuallyOnTwoChains<T>(check: Check<T>, what: string, timeoutMs = 120_000): Promise<T> {
  const h = await getHarness();
  let poked = 0;
  return poll(check, what, {
    timeoutMs,
    done: (value) => Boolean(value),
    async between() {
      for (const c of TWO_CHAINS) await h.twoChains.mine(c.chainId);
      if (Date.now() - poked >= 3000) {
        for (const c of TWO_CHAINS) await h.engine.pokeChainScanner(c.chainId);
        poked = Date.now();
      }
      await new Promise((r) => setTimeout(r, 150));
    },
  });
}

/** ledger reconcile, the differences and heads of the two chains only (the sandbox chain is other tests'). */
export async function reconcileTwoChains() {
  const h = await getHarness();
  return eventuallyOnTwoChains(async (saw) => {
    const result = await reconcileLedger({ prisma: h.db.prisma, chains: h.chain.chains, custody: h.chain.custody });
    const differences = result.differences.filter((d) => d.chainId !== h.chainId);
    saw(differences);
    return differences.length === 0 ? result : undefined;
  }, 'ledger reconcile clean on chains 8453 and 1');
}
