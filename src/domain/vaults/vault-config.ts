import { findAsset, findNetwork, type TEnvironmentConfig, type TNetworkConfig } from '../../config/environments';

export interface VaultToken {
  symbol: string;
  chainId: number;
  tokenAddress: string;
  decimals: number;
}

export interface VaultsSetup {
  /** The default network: the one a vault created without a chainId records. */
  network: TNetworkConfig;
  /** Every network vaults run on, the default first. */
  networks: TNetworkConfig[];
  /** The tokens of every network, in the order configured. */
  tokens: VaultToken[];
  spendLimit: { defaultAmountAtomic: bigint; maxAmountAtomic: bigint; currency: string; decimals: number };
  resourceVersion: number;
}

export const SPEND_PERIOD = 'fixed_30_day';
export const SPEND_PERIOD_MS = 30 * 24 * 60 * 60 * 1000;

/** The environment's vault setup, or null when the module is off or a network/token of it is not configured. */
export function vaultsSetup(env: TEnvironmentConfig): VaultsSetup | null {
  if (!env.modules.includes('vaults') || !env.vaults) return null;
  const networks: TNetworkConfig[] = [];
  const tokens: VaultToken[] = [];
  for (const entry of [{ chainId: env.vaults.chainId, tokens: env.vaults.tokens }, ...(env.vaults.networks ?? [])]) {
    const network = findNetwork(env, entry.chainId);
    if (!network) return null;
    networks.push(network);
    for (const symbol of entry.tokens) {
      const asset = findAsset(network, symbol);
      if (!asset) return null;
      tokens.push({ symbol: asset.symbol, chainId: network.chainId, tokenAddress: asset.tokenAddress, decimals: asset.decimals });
    }
  }
  return {
    network: networks[0]!,
    networks,
    tokens,
    spendLimit: {
      defaultAmountAtomic: BigInt(env.vaults.spendLimit.defaultAmountAtomic),
      maxAmountAtomic: BigInt(env.vaults.spendLimit.maxAmountAtomic),
      currency: env.vaults.spendLimit.currency,
      decimals: env.vaults.spendLimit.decimals,
    },
    resourceVersion: env.vaults.resourceVersion,
  };
}

/** The vault network of that chain, or null when vaults do not run on it. */
export function vaultNetwork(setup: VaultsSetup, chainId: number): TNetworkConfig | null {
  return setup.networks.find((n) => n.chainId === chainId) ?? null;
}

/** A reserve's key: a token is one contract on one chain. */
export const reserveKey = (chainId: number, tokenAddress: string): string => `${chainId}:${tokenAddress.toLowerCase()}`;

/** Start of the fixed 30-day period containing `at`, counted from the vault's anchor. */
export function periodStartOf(anchor: Date, at: Date): Date {
  const elapsed = Math.max(0, at.getTime() - anchor.getTime());
  return new Date(anchor.getTime() + Math.floor(elapsed / SPEND_PERIOD_MS) * SPEND_PERIOD_MS);
}
