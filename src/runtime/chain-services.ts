import type { TEnvironments } from '../config/environments';
import { createChainRegistry, type ChainRegistry } from '../chain/registry';
import { fundTestWallet } from '../chain/sandbox';
import type { PrismaClient } from '../db/client';
import { serviceWalletDisagreements } from '../domain/chain/custody-addresses';
import {
  checkedCustody,
  configuredPublicKeys,
  createAddressBook,
  createHdSigner,
  formatPublicKeys,
  loadPublicKeys,
  loadSigningSeed,
  publicKeyDifferences,
  writePublicKeysFile,
  type AddressBook,
  type Custody,
  type SupplyOptions,
} from '../custody';

/** What the API and the operator CLI run with: the chains and the address book (public keys only). */
export interface ChainServices {
  chains: ChainRegistry;
  addressBook: AddressBook;
  /** Only in a process with the signing role (the worker). */
  custody?: Custody;
}

/** The signing role's: the address book and a signer that agrees with it. */
export interface SigningChainServices extends ChainServices {
  custody: Custody;
}

/** The keys a process holds: always the address book; the signer only with the signing role. */
export interface RoleKeys {
  addressBook: AddressBook;
  custody?: Custody;
}

/**
 * The signing role's keys: the seed (custody/supply.ts), its public keys checked against
 * CUSTODY_PUBLIC_KEYS when that is set too. In the sandbox the public keys are written next to the
 * seed, where an API of its own reads them.
 */
export function signingKeys(supply: SupplyOptions): Required<RoleKeys> {
  const seed = loadSigningSeed(supply);
  const signer = createHdSigner({ mnemonic: seed.mnemonic });
  const configured = configuredPublicKeys(supply.env);
  const differ = configured ? publicKeyDifferences(configured.keys, signer.publicKeys) : [];
  if (differ.length > 0) {
    throw new Error(
      `custody keys disagree: CUSTODY_PUBLIC_KEYS is not what the seed (${seedSourceName(seed.source)}) derives for ${differ.join(', ')}; ` +
        `the seed's public keys are ${formatPublicKeys(signer.publicKeys)}`,
    );
  }
  if (supply.deployment === 'sandbox') writePublicKeysFile(supply.dataDir, signer.publicKeys);
  const addressBook = createAddressBook(signer.publicKeys);
  return { addressBook, custody: checkedCustody(addressBook, signer) };
}

/** The API's keys: public keys only (CUSTODY_PUBLIC_KEYS, or the sandbox's public-keys file); the seed is never read. */
export function addressKeys(supply: SupplyOptions): RoleKeys {
  return { addressBook: createAddressBook(loadPublicKeys(supply).keys) };
}

/** A process with the worker role signs (and its API, if any, gets the address book alone); an API-only process never reads the seed. */
export function keysForRoles(roles: readonly string[], supply: SupplyOptions): RoleKeys {
  return roles.includes('worker') ? signingKeys(supply) : addressKeys(supply);
}

/** The signing role's chain services (the sandbox's by default, as tests and the simulation run it). */
export function createChainServices(
  envs: TEnvironments,
  dataDir: string,
  options: Partial<Omit<SupplyOptions, 'dataDir'>> = {},
): SigningChainServices {
  return {
    chains: createChainRegistry(envs),
    ...signingKeys({ deployment: options.deployment ?? 'sandbox', dataDir, env: options.env ?? {} }),
  };
}

/**
 * Refuses keys that derive other treasury or fee addresses than the database registered: the API
 * would hand out addresses the worker can't sign for (or the other way round).
 */
export async function assertKeysMatchDatabase(prisma: PrismaClient, keys: RoleKeys): Promise<void> {
  const disagreements = await serviceWalletDisagreements(prisma, keys.addressBook);
  if (disagreements.length === 0) return;
  throw new Error(
    `custody keys disagree with the database: ${disagreements.join('; ')}. ` +
      `These are not the keys this database's addresses were handed out with: give ${keys.custody ? 'the signing role the seed (CUSTODY_MNEMONIC_FILE or CUSTODY_MNEMONIC)' : 'the API the CUSTODY_PUBLIC_KEYS'} of that seed`,
  );
}

function seedSourceName(source: string): string {
  return (
    { 'secret-file': 'CUSTODY_MNEMONIC_FILE', env: 'CUSTODY_MNEMONIC', file: 'the data dir', created: 'the data dir' }[source] ?? source
  );
}

const SANDBOX_TREASURY_FLOOR_WEI = 100n * 10n ** 18n;
const SANDBOX_TREASURY_FUNDING_WEI = 1_000n * 10n ** 18n;

/** Sandbox only: gives the treasury gas money from anvil's funded dev account, so settlements can pay gas. */
export async function fundSandboxTreasury(services: ChainServices, rpcUrl: string): Promise<void> {
  const treasury = services.addressBook.deriveAddress({ purpose: 'treasury', index: 0 });
  const chain = services.chains.networks().find((n) => n.rpcUrl === rpcUrl);
  if (!chain) return;
  const balance = await services.chains.get(chain.chainId).getNativeBalance(treasury);
  // Each settlement is covered at the network's fee cap (0.04 ETH a leg at 500 gwei): room for thousands.
  if (balance < SANDBOX_TREASURY_FLOOR_WEI) await fundTestWallet({ rpcUrl, address: treasury, nativeWei: SANDBOX_TREASURY_FUNDING_WEI });
}
