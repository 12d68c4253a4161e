import type { TEnvironmentConfig, TEnvironments, ModuleId } from '../../config/environments';
import type { AuthenticatedApp } from './apps';
import {
  availability,
  availabilityFlags,
  featureSwitch,
  MODULE_LIST,
  MODULES,
  moduleAvailability,
  type Availability,
  type ModuleRuntime,
} from './modules';
import { toAtomic } from '../amounts/amounts';
import type { TPartnerConfig } from './partner-config.schemas';
import { vaultsSetup } from '../vaults/vault-config';
import { mailReaches, type MailAvailability } from './mail-reach';
import { BANK_COUNTRY_NAMES } from '../bank-accounts/bank-requirements';
import { publicPaymentCreation } from '../payments/public-payments';
import { DELIVERY_POLICY, EVENT_GROUPS, EVENT_NAMES, RECOMMENDED_EVENTS, SIGNATURES } from '../event-log/event-catalog';
import type { DestinationPolicy } from '../../webhooks/destination';

function pct(bps: number): string {
  return (bps / 100).toFixed(2);
}

/**
 * What the deployment adds to the environments file: outgoing mail (vault approvals), the off-ramp
 * provider (bank accounts), the surfaces it serves and where it delivers webhooks.
 */
export interface ConfigRuntime extends ModuleRuntime {
  mail: MailAvailability;
  /** Whether this deployment serves the client API (/v2/client/...). */
  clientApi: boolean;
  /** Whether this deployment serves a partner dashboard. */
  partnerConsole: boolean;
  /** The one setting endpoint creation and delivery both follow (WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS). */
  webhooks: DestinationPolicy;
}

type Capabilities = TPartnerConfig['capabilities'];
type Network = TEnvironmentConfig['networks'][number];
/** A network's deposit addresses, the same in `networks` and in capabilities.depositAddresses. */
type NetworkDeposits = Pick<TPartnerConfig['networks'][number]['depositAddresses'], 'operational' | 'disabledReason'>;

export function buildPartnerConfig(app: AuthenticatedApp, envs: TEnvironments, runtime: ConfigRuntime): TPartnerConfig {
  const env: TEnvironmentConfig = envs.environments[app.environment];
  const moduleState = (id: ModuleId) => moduleAvailability(id, env, runtime, app.scopes);
  const deposits = moduleState('deposit_addresses');
  const payments = moduleState('payments');
  const networkDeposits: NetworkDeposits = {
    operational: deposits.operational,
    disabledReason: deposits.operational ? null : 'not_operational',
  };
  const balancesSwitch = featureSwitch(true, [moduleState('balances_and_transactions')]);
  // On only where a partner user can sign in: the code is mailed (SMTP), or put in the sandbox outbox.
  const partnerConsole = featureSwitch(runtime.partnerConsole && mailReaches(app.environment, runtime.mail), []);

  return {
    id: `pcfg_${app.id}`,
    appId: app.id,
    organizationId: env.organizationId,
    environmentId: env.environmentId,
    apiVersion: app.apiVersion,
    supportedApiVersions: envs.supportedApiVersions,
    namespace: env.namespace,
    scopes: app.scopes,
    credentialType: 'app',
    credentialMode: 'app_secret',
    status: 'active',
    modules: MODULE_LIST.map((id) => moduleEntry(id, moduleState(id))),
    compliance: {
      partnerKyb: { status: 'not_required', updatedAt: null },
      requirements: { partnerFiatAccess: 'kyb', individualUpaFiatAccess: 'kyc', businessUpaFiatAccess: 'kyb' },
    },
    fees: feesSection(env.fees),
    networks: env.networks.map((n) => networkEntry(n, networkDeposits)),
    capabilities: {
      accounts: accountsCapability(moduleState('accounts')),
      depositAddresses: depositAddressesCapability(env, deposits, networkDeposits),
      payments: paymentsCapability(app, env, payments, moduleState('bank_accounts')),
      balancesAndTransactions: { ...balancesSwitch, balances: { ...balancesSwitch }, transactions: { ...balancesSwitch } },
      webhooks: webhooksCapability(runtime.webhooks),
      vaults: vaultsCapability(moduleState('vaults'), vaultsSetup(env), mailReaches(app.environment, runtime.mail)),
    },
    integrations: {
      // Every client route reads a Payment: the payments module's (src/http/routes/client.ts).
      clientApi: featureSwitch(runtime.clientApi, [payments]),
      webhooks: featureSwitch(true, [moduleState('webhooks')]),
      partnerConsole,
    },
    // The dashboard served here, unless the environments file names another (a hosted one).
    links: { ...env.links, dashboard: env.links.dashboard ?? (partnerConsole.enabled ? '/dashboard' : null) },
  };
}

/** One entry of `modules`: the module's catalog entry and its state for this credential. */
function moduleEntry(id: ModuleId, state: Availability): TPartnerConfig['modules'][number] {
  return {
    id,
    name: MODULES[id].name,
    description: MODULES[id].description,
    scopes: MODULES[id].scopes,
    defaultEnabled: !MODULES[id].optional,
    optional: MODULES[id].optional,
    ...state,
  };
}

function feesSection(fees: TEnvironmentConfig['fees']): TPartnerConfig['fees'] {
  const feeTotal = fees.partnerFeeBps + fees.platformFeeBps;
  return {
    partnerFeeBps: fees.partnerFeeBps,
    partnerFeePercent: pct(fees.partnerFeeBps),
    platformFeeBps: fees.platformFeeBps,
    platformFeePercent: pct(fees.platformFeeBps),
    totalFeeBps: feeTotal,
    totalFeePercent: pct(feeTotal),
    model: 'deducted_at_final_settlement',
    currency: 'USD',
  };
}

/** One entry of `networks`: the service collects Payments and gives deposit addresses on every network it runs. */
function networkEntry(n: Network, networkDeposits: NetworkDeposits): TPartnerConfig['networks'][number] {
  return {
    code: n.code,
    aliases: n.aliases,
    chainFamily: n.chainFamily,
    chainId: n.chainId,
    depositAddresses: { supported: true, provider: 'service', ...networkDeposits },
    connectedWallets: { supported: true },
    settlement: { supported: true },
    paymentCollection: {
      supported: true,
      provider: 'service',
      network: n.code,
      configured: true,
      detectionMode: 'chain_scanner',
      disabledReason: null,
    },
    defaultAsset: n.defaultAsset,
    supportedAssets: assetsOf(n),
  };
}

function assetsOf(n: Network): TPartnerConfig['networks'][number]['supportedAssets'] {
  return n.assets.map((a) => ({
    symbol: a.symbol,
    tokenAddress: a.tokenAddress,
    decimals: a.decimals,
    kind: a.kind,
    minimumDeposit: {
      amount: a.minimumDeposit.amount,
      amountAtomic: toAtomic(a.minimumDeposit.amount, a.decimals).toString(),
      inclusive: a.minimumDeposit.inclusive,
    },
  }));
}

function accountsCapability(state: Availability): Capabilities['accounts'] {
  return {
    ...availabilityFlags(state),
    accountIdLookup: true,
    externalUserIdLookup: true,
    handles: true,
    connectedWallets: true,
    emailVerification: { mode: 'none', partnerAssertionAllowed: false, version: 1 },
  };
}

function depositAddressesCapability(
  env: TEnvironmentConfig,
  state: Availability,
  networkDeposits: NetworkDeposits,
): Capabilities['depositAddresses'] {
  return {
    ...availabilityFlags(state),
    supportedChainIds: env.networks.map((n) => n.chainId),
    availableChainIds: state.available ? env.networks.map((n) => n.chainId) : [],
    supportedNetworks: env.networks.map((n) => ({
      code: n.code,
      chainId: n.chainId,
      chainFamily: n.chainFamily,
      ...networkDeposits,
      assets: assetsOf(n),
    })),
  };
}

function paymentsCapability(
  app: AuthenticatedApp,
  env: TEnvironmentConfig,
  payments: Availability,
  bank: Availability,
): Capabilities['payments'] {
  const methods = paymentMethods(env, payments, bank);
  return {
    ...availabilityFlags(payments),
    capabilities: {
      crypto: methods.direct.available,
      onramp: methods.onramp.available,
      externalQr: methods.externalQr.available,
      externalBank: methods.externalBank.available,
      card: methods.card.available,
    },
    methods,
    publicPaymentCreation: publicPaymentCreation(app, env, payments),
  };
}

/** The event catalog and delivery policy, plus whether this deployment delivers to private addresses. */
function webhooksCapability(policy: DestinationPolicy): Capabilities['webhooks'] {
  return {
    supportedEvents: [...EVENT_NAMES],
    recommendedEvents: [...RECOMMENDED_EVENTS],
    eventGroups: EVENT_GROUPS.map((g) => ({ id: g.id, label: g.label, events: [...g.events] })),
    signatures: { ...SIGNATURES },
    deliveryPolicy: {
      ...DELIVERY_POLICY,
      retryableStatuses: [...DELIVERY_POLICY.retryableStatuses],
      localPrivateDestinationsAllowed: policy.allowPrivateDestinations,
    },
  };
}

/**
 * capabilities.payments.methods: direct is the payments module itself; externalBank needs the bank
 * accounts module too; the rest are methods the service does not offer (not entitled).
 */
function paymentMethods(env: TEnvironmentConfig, payments: Availability, bank: Availability) {
  const notOffered = () => availabilityFlags(availability(false, payments.credentialAllowed, false));
  return {
    direct: availabilityFlags(payments),
    routing: notOffered(),
    onramp: notOffered(),
    externalQr: {
      ...notOffered(),
      destinationType: 'external_qr',
      standaloneApi: false,
      countries: [],
      preparationAvailable: false,
      paymentExecutionAvailable: false,
    },
    externalBank: externalBankMethod(env, bank, payments),
    card: notOffered(),
  };
}

/**
 * The bank countries of the environment (config/environments.json `bankAccounts`), as the config
 * reports them. Paying a bank account needs both modules: bank accounts (linking, the directory) and
 * payments; preparing one needs the bank accounts module alone, as its routes do.
 */
function externalBankMethod(env: TEnvironmentConfig, bank: Availability, payments: Availability) {
  const countries = (env.bankAccounts?.countries ?? []).map((c) => ({
    country: c.country,
    countryName: BANK_COUNTRY_NAMES[c.country].name,
    currency: BANK_COUNTRY_NAMES[c.country].currency,
    rails: c.rails,
    minimumAmountAtomic: c.minimumAmountAtomic,
    maximumAmountAtomic: c.maximumAmountAtomic,
    enabled: c.enabled,
  }));
  const state = availabilityFlags(
    availability(bank.entitled && payments.entitled, payments.credentialAllowed, bank.operational && payments.operational),
  );
  return {
    ...state,
    // Paid as a send Payment to a linked bank account (destination.type bank_account).
    destinationType: 'bank_account',
    standaloneApi: false,
    countries,
    // Preparing a payout: linking a bank account (v2:accounts) and reading the directory.
    preparationAvailable: bank.available,
    paymentExecutionAvailable: state.available,
    directoryEndpoint: '/v2/payments/external-bank/banks',
  };
}

function vaultsCapability(state: Availability, setup: ReturnType<typeof vaultsSetup>, mailReady: boolean) {
  const approvalReady = state.available && mailReady;
  return {
    ...availabilityFlags(state),
    scope: 'v2:vaults' as const,
    runtime: setup ? 'service_custody' : 'none',
    ownershipModes: { external: false, stableyard: setup !== null },
    managedApproval: {
      method: 'email_otp',
      ready: approvalReady,
      disabledReason: approvalReady ? null : !state.available ? state.disabledReason : 'mail_not_configured',
    },
    spendLimit: {
      defaultAmountAtomic: (setup?.spendLimit.defaultAmountAtomic ?? 0n).toString(),
      maxAmountAtomic: (setup?.spendLimit.maxAmountAtomic ?? 0n).toString(),
      currency: setup?.spendLimit.currency ?? 'USD',
      decimals: setup?.spendLimit.decimals ?? 6,
      period: 'fixed_30_day',
    },
    yieldProviders: ['none'],
    tokens: setup?.tokens.map((t) => ({ ...t })) ?? [],
    resourceVersion: setup?.resourceVersion ?? 0,
  };
}
