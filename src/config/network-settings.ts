import { catalogNetwork } from '../chain/network-catalog';
import type { EnvironmentName, TAssetConfig, TCatalogNetworkRef, TNetworkConfig, TNetworkEntry } from './network-schemas';

/**
 * Where each network's RPC URLs come from: the setting RPC_URLS_<CODE> (the code upper-cased, `-` as
 * `_`), comma-separated URLs tried in order (viem's fallback transport). A full network config in the
 * environments file may carry its own rpcUrl instead (the sandbox's anvil); the setting wins.
 */
export function rpcUrlSetting(code: string): string {
  return `RPC_URLS_${code.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

const SETTING = /^RPC_URLS_[A-Z0-9_]+$/;

/** Every RPC_URLS_* setting of the process environment, checked: http(s) URLs, at least one each. */
export function parseRpcUrlSettings(env: NodeJS.ProcessEnv): { settings: Record<string, string[]>; problems: string[] } {
  const settings: Record<string, string[]> = {};
  const problems: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!SETTING.test(name) || value === undefined) continue;
    const urls = value
      .split(',')
      .map((u) => u.trim())
      .filter(Boolean);
    // The value itself is not echoed: a provider's URL often carries its API key.
    if (urls.length === 0) problems.push(`${name}: at least one URL`);
    urls.forEach((url, i) => {
      if (!isHttpUrl(url)) problems.push(`${name}: URL ${i + 1} is not an http(s) URL`);
    });
    settings[name] = urls;
  }
  return { settings, problems };
}

function isHttpUrl(value: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/** A network an environment names but this deployment has no RPC URL for: not run here. */
export interface LeftOutNetwork {
  environment: EnvironmentName;
  code: string;
  chainId: number;
  setting: string;
}

const DEFAULT_MINIMUM_DEPOSIT = { amount: '1', inclusive: true };

/** A catalog reference as the full network config the rest of the service reads. */
export function expandCatalogNetwork(
  ref: TCatalogNetworkRef,
  urls: string[],
): Omit<TNetworkConfig, 'rpcUrl'> & { rpcUrl: string | undefined } {
  const network = catalogNetwork(ref.code);
  if (!network) throw new Error(`unreachable: ${ref.code} was checked against the catalog`);
  const assets: TAssetConfig[] = ref.assets.map((a) => {
    const wanted = typeof a === 'string' ? { symbol: a, minimumDeposit: DEFAULT_MINIMUM_DEPOSIT } : a;
    const asset = network.assets.find((c) => c.symbol === wanted.symbol)!;
    return {
      symbol: asset.symbol,
      tokenAddress: asset.tokenAddress,
      decimals: asset.decimals,
      kind: 'token',
      minimumDeposit: wanted.minimumDeposit,
    };
  });
  return {
    code: network.code,
    name: network.name,
    aliases: network.aliases,
    chainFamily: 'evm',
    chainId: network.chainId,
    rpcUrl: urls[0],
    fallbackRpcUrls: urls.slice(1),
    confirmations: ref.confirmations ?? network.confirmations.depth,
    blockTimeMs: network.blockTimeMs,
    defaultAsset: ref.defaultAsset ?? assets[0]!.symbol,
    assets,
    explorerTxUrl: ref.explorerTxUrl ?? network.explorerTxUrl,
    ...(network.gas || ref.gas ? { gas: { ...network.gas, ...ref.gas } } : {}),
  };
}

/**
 * One environment's networks as the service runs them: catalog references expanded, RPC URLs from the
 * settings. A network with no RPC URL is left out (and reported), so is a public Payment destination on it.
 */
export function resolveNetworks<E extends { networks: TNetworkEntry[]; publicPayments?: { destinations: Array<{ chainId: number }> } }>(
  environment: EnvironmentName,
  env: E,
  rpcUrls: Record<string, string[]>,
): { env: Omit<E, 'networks'> & { networks: TNetworkConfig[] }; leftOut: LeftOutNetwork[] } {
  const networks: TNetworkConfig[] = [];
  const leftOut: LeftOutNetwork[] = [];
  for (const entry of env.networks) {
    const setting = rpcUrlSetting(entry.code);
    const fromSetting = rpcUrls[setting];
    if ('chainId' in entry) {
      networks.push(fromSetting ? { ...entry, rpcUrl: fromSetting[0]!, fallbackRpcUrls: fromSetting.slice(1) } : entry);
      continue;
    }
    const expanded = expandCatalogNetwork(entry, fromSetting ?? []);
    if (expanded.rpcUrl === undefined) leftOut.push({ environment, code: expanded.code, chainId: expanded.chainId, setting });
    else networks.push({ ...expanded, rpcUrl: expanded.rpcUrl });
  }
  const gone = new Set(leftOut.map((n) => n.chainId));
  const publicPayments = env.publicPayments && {
    ...env.publicPayments,
    destinations: env.publicPayments.destinations.filter((d) => !gone.has(d.chainId)),
  };
  return { env: { ...env, networks, ...(publicPayments ? { publicPayments } : {}) }, leftOut };
}
