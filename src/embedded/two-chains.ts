import type { Address } from 'viem';
import type { TEnvironments, TNetworkConfig } from '../config/environments';
import { catalogTokenAddress, placeTestTokenAt } from '../chain/sandbox';
import { jsonRpc } from '../chain/chain-faults';
import { expandCatalogNetwork } from '../config/network-settings';
import { startAnvil, type AnvilNode } from './anvil';

/**
 * Two local chains shaped as production: anvil nodes with the chain ids of Base (8453) and Ethereum
 * (1), the test token's code at the real USDC and EURC addresses of each. The test harness and the
 * production rehearsal run the production environment on them.
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

/** Starts both nodes and places the tokens; `blockTime` (seconds) as a live chain, else automine. */
export async function startTwoChains(opts: { blockTime?: number } = {}): Promise<TwoChains> {
  const started = await Promise.allSettled(
    TWO_CHAINS.map((c) => startAnvil({ port: 0, chainId: c.chainId, ...(opts.blockTime ? { blockTime: opts.blockTime } : {}) })),
  );
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
  const mine = async (chainId: TwoChainId, blocks = 1) =>
    void (await jsonRpc(nodes[chainId].rpcUrl, 'anvil_mine', [`0x${blocks.toString(16)}`]));
  return { nodes, networks: twoChainNetworks({ 8453: nodes[8453].rpcUrl, 1: nodes[1].rpcUrl }), mine, stop };
}

/** The environments with the production environment on the two chains (its modules unchanged). */
export function withTwoChainProduction(envs: TEnvironments, networks: TNetworkConfig[]): TEnvironments {
  return { ...envs, environments: { ...envs.environments, production: { ...envs.environments.production, networks } } };
}
