import type { TEnvironments } from '../config/environments';
import { createChainRegistry, type ChainRegistry } from '../chain/registry';
import { fundTestWallet } from '../chain/sandbox';
import { createHdCustody, loadOrCreateSeed, type Custody } from '../custody';

export interface ChainServices {
  chains: ChainRegistry;
  custody: Custody;
}

export function createChainServices(envs: TEnvironments, dataDir: string): ChainServices {
  const seed = loadOrCreateSeed(dataDir);
  return { chains: createChainRegistry(envs), custody: createHdCustody({ mnemonic: seed.mnemonic }) };
}

/** Sandbox only: gives the treasury gas money from anvil's funded dev account, so settlements can pay gas. */
export async function fundSandboxTreasury(services: ChainServices, rpcUrl: string): Promise<void> {
  const treasury = services.custody.deriveAddress({ purpose: 'treasury', index: 0 });
  const chain = services.chains.networks().find((n) => n.rpcUrl === rpcUrl);
  if (!chain) return;
  const balance = await services.chains.get(chain.chainId).getNativeBalance(treasury);
  if (balance < 10n ** 18n) await fundTestWallet({ rpcUrl, address: treasury, nativeWei: 100n * 10n ** 18n });
}
