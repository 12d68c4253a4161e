import type { ModuleId, TEnvironmentConfig } from '../../config/environments';
import type { Scope } from './apps';
import { ApiError } from '../requests/errors';
import { vaultsSetup, type VaultsSetup } from '../vaults/vault-config';

/**
 * Whether a module is available to an app: the one computation behind both `modules[]` of
 * GET /v2/partners/config and the 424 every route of an unavailable module answers
 * (src/http/middleware/modules.ts). docs/decisions/api-conventions.md "Module availability".
 */

/** The modules the service knows and the scope each needs. */
export const MODULES: Record<ModuleId, { name: string; description: string; scopes: Scope[]; optional: boolean }> = {
  accounts: { name: 'Accounts', description: 'Universal Payment Accounts', scopes: ['v2:accounts'], optional: false },
  payments: { name: 'Payments', description: 'Escrow-first receive and send Payments', scopes: ['v2:payments'], optional: false },
  deposit_addresses: {
    name: 'Deposit addresses',
    description: 'Reusable receive addresses',
    scopes: ['v2:deposit_addresses'],
    optional: true,
  },
  vaults: { name: 'Vaults', description: 'Policy-controlled stablecoin vaults', scopes: ['v2:vaults'], optional: true },
  webhooks: { name: 'Webhooks', description: 'Signed event notifications', scopes: [], optional: false },
  balances_and_transactions: {
    name: 'Balances and transactions',
    description: 'Ledger projections',
    scopes: ['v2:accounts'],
    optional: true,
  },
  bank_accounts: {
    name: 'Bank accounts',
    description: 'Linked bank accounts as payout destinations',
    scopes: ['v2:accounts'],
    optional: true,
  },
};

export const MODULE_LIST = Object.keys(MODULES) as ModuleId[];

/** What the deployment (not the environments file) contributes: the off-ramp provider bank accounts need. */
export interface ModuleRuntime {
  /** The code of the off-ramp provider this deployment talks to; null without one. */
  offrampProviderCode: string | null;
}

export type DisabledReason = 'not_entitled' | 'credential_scope_missing' | 'not_operational';

export interface Availability {
  entitled: boolean;
  credentialAllowed: boolean;
  operational: boolean;
  available: boolean;
  disabledReason: DisabledReason | null;
}

/**
 * The spec's "availability flags" of a capability group (capabilities.accounts, .payments, each
 * payment method, .vaults...): a module's state plus availableToCredential. Every group of the config
 * is built here, so none lacks a flag.
 */
export interface AvailabilityFlags extends Availability {
  availableToCredential: boolean;
}

export function availabilityFlags(state: Availability): AvailabilityFlags {
  return { ...state, availableToCredential: state.available };
}

/** An on/off switch of the config: integrations.* and capabilities.balancesAndTransactions. */
export interface FeatureSwitch {
  enabled: boolean;
  availableToCredential: boolean;
}

/**
 * Enabled when the deployment serves the feature and every module it needs runs for the app's
 * environment (entitled and operational); available to the credential when its scopes reach those
 * modules too. The same states the routes' guards (403, 424) judge by.
 */
export function featureSwitch(served: boolean, needs: readonly Availability[]): FeatureSwitch {
  const enabled = served && needs.every((m) => m.entitled && m.operational);
  return { enabled, availableToCredential: enabled && needs.every((m) => m.credentialAllowed) };
}

/** Entitlement first, then the credential, then whether it runs: the first missing one is the reason. */
export function availability(entitled: boolean, credentialAllowed: boolean, operational: boolean): Availability {
  const available = entitled && credentialAllowed && operational;
  const disabledReason = !entitled
    ? 'not_entitled'
    : !credentialAllowed
      ? 'credential_scope_missing'
      : !operational
        ? 'not_operational'
        : null;
  return { entitled, credentialAllowed, operational, available, disabledReason };
}

/** Bank accounts run where a country is enabled and the environment's provider is the deployment's. */
function bankAccountsRun(env: TEnvironmentConfig, runtime: ModuleRuntime): boolean {
  const bank = env.bankAccounts;
  return !!bank && bank.countries.some((c) => c.enabled) && runtime.offrampProviderCode === bank.providerCode;
}

/** Whether the module can run in the environment. An unentitled module's reason is not_entitled, whatever this says. */
function operational(id: ModuleId, env: TEnvironmentConfig, runtime: ModuleRuntime): boolean {
  if (!env.modules.includes(id)) return true;
  if (id === 'vaults') return vaultsSetup(env) !== null; // its network and tokens configured, not just listed
  if (id === 'bank_accounts') return bankAccountsRun(env, runtime);
  return true;
}

/** The module for a credential with `scopes` (null: the environment alone, as the routes' guard asks). */
export function moduleAvailability(
  id: ModuleId,
  env: TEnvironmentConfig,
  runtime: ModuleRuntime,
  scopes: readonly Scope[] | null = null,
): Availability {
  const credentialAllowed = scopes === null || MODULES[id].scopes.every((s) => scopes.includes(s));
  return availability(env.modules.includes(id), credentialAllowed, operational(id, env, runtime));
}

/** 424 chain_config_missing, naming the module and why (spec: Authentication rule 3). */
export function moduleUnavailable(id: ModuleId, reason: DisabledReason): ApiError {
  return new ApiError('chain_config_missing', `The ${id} module is not available for this app (${reason})`, {
    module: id,
    disabledReason: reason,
  });
}

/**
 * Throws the module's 424 unless the environment runs it. The scope is not checked here: a missing
 * scope is the route's 403, checked first (requireScope).
 */
export function assertModuleAvailable(id: ModuleId, env: TEnvironmentConfig, runtime: ModuleRuntime): void {
  const state = moduleAvailability(id, env, runtime);
  if (!state.available) throw moduleUnavailable(id, state.disabledReason!);
}

/** The environment's vault setup, or the vaults module's 424 (its routes are guarded; the client's Vault option asks here). */
export function availableVaultsSetup(env: TEnvironmentConfig): VaultsSetup {
  // Whether vaults run does not depend on the deployment (only bank accounts do).
  assertModuleAvailable('vaults', env, { offrampProviderCode: null });
  const setup = vaultsSetup(env);
  if (!setup) throw new Error('the vaults module is available without a vault setup');
  return setup;
}
