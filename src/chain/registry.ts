import type { TEnvironments, TNetworkConfig } from '../config/environments';
import { gasSettings } from '../config/gas';
import { createEvmChain } from './evm';
import type { Chain } from './types';

/** One Chain client per configured network (chain ids are unique across environments). */
export interface ChainRegistry {
  get(chainId: number): Chain;
  network(chainId: number): TNetworkConfig;
  networks(): TNetworkConfig[];
}

export function createChainRegistry(envs: TEnvironments): ChainRegistry {
  const networks = new Map<number, TNetworkConfig>();
  for (const env of [envs.environments.sandbox, envs.environments.production]) {
    for (const n of env.networks) networks.set(n.chainId, n);
  }
  const chains = new Map<number, Chain>();
  return {
    get(chainId) {
      const network = this.network(chainId);
      let chain = chains.get(chainId);
      if (!chain) {
        chain = createEvmChain({ chainId, rpcUrl: network.rpcUrl, fallbackRpcUrls: network.fallbackRpcUrls, gas: gasSettings(network) });
        chains.set(chainId, chain);
      }
      return chain;
    },
    network(chainId) {
      const n = networks.get(chainId);
      if (!n) throw new Error(`chain ${chainId} is not configured`);
      return n;
    },
    networks: () => [...networks.values()],
  };
}
