import type { TEnvironmentConfig, TEnvironments, ModuleId } from '../config/environments';
import type { AuthenticatedApp } from './apps';
import { availability, MODULE_LIST, MODULES, moduleAvailability, type Availability, type ModuleRuntime } from './modules';
import { toAtomic } from './amounts';
import type { TPartnerConfig } from './partner-config.schemas';
import { approvalMailReady, vaultsSetup, type MailAvailability } from './vaults/vault-config';
import { BANK_COUNTRY_NAMES } from './bank-accounts/bank-requirements';
import { publicPaymentCreation } from './payments/public-payments';
import { DELIVERY_POLICY, EVENT_GROUPS, EVENT_NAMES, RECOMMENDED_EVENTS, SIGNATURES } from './event-catalog';

function pct(bps: number): string {
  return (bps / 100).toFixed(2);
}

/** What the deployment adds to the environments file: outgoing mail (vault approvals) and the off-ramp provider (bank accounts). */
export interface ConfigRuntime extends ModuleRuntime {
  mail: MailAvailability;
}

export function buildPartnerConfig(app: AuthenticatedApp, envs: TEnvironments, runtime: ConfigRuntime): TPartnerConfig {
  const env: TEnvironmentConfig = envs.environments[app.environment];
  const vaultSetup = vaultsSetup(env);
  const moduleState = (id: ModuleId) => moduleAvailability(id, env, runtime, app.scopes);
  const modules = MODULE_LIST.map((id) => ({
    id,
    name: MODULES[id].name,
    description: MODULES[id].description,
    scopes: MODULES[id].scopes,
    defaultEnabled: !MODULES[id].optional,
    optional: MODULES[id].optional,
    ...moduleState(id),
  }));

  const assetsOf = (n: TEnvironmentConfig['networks'][number]) =>
    n.assets.map((a) => ({
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

  const deposits = moduleState('deposit_addresses');
  const payments = moduleState('payments');
  const accounts = moduleState('accounts');
  const balances = moduleState('balances_and_transactions');
  const networks = env.networks.map((n) => ({
    code: n.code,
    aliases: n.aliases,
    chainFamily: n.chainFamily,
    chainId: n.chainId,
    depositAddresses: { supported: true, provider: 'service', operational: true, disabledReason: null },
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
  }));
  const feeTotal = env.fees.partnerFeeBps + env.fees.platformFeeBps;
  const externalBank = externalBankMethod(app, env, moduleState('bank_accounts'), payments);
  const methodOff = { ...availability(false, true, false) };
  const bankMethod = {
    ...methodOff,
    destinationType: 'external_bank',
    standaloneApi: false,
    countries: [],
    preparationAvailable: false,
    paymentExecutionAvailable: false,
  };

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
    modules,
    compliance: {
      partnerKyb: { status: 'not_required', updatedAt: null },
      requirements: { partnerFiatAccess: 'kyb', individualUpaFiatAccess: 'kyc', businessUpaFiatAccess: 'kyb' },
    },
    fees: {
      partnerFeeBps: env.fees.partnerFeeBps,
      partnerFeePercent: pct(env.fees.partnerFeeBps),
      platformFeeBps: env.fees.platformFeeBps,
      platformFeePercent: pct(env.fees.platformFeeBps),
      totalFeeBps: feeTotal,
      totalFeePercent: pct(feeTotal),
      model: 'deducted_at_final_settlement',
      currency: 'USD',
    },
    networks,
    capabilities: {
      accounts: {
        ...accounts,
        availableToCredential: accounts.available,
        accountIdLookup: true,
        externalUserIdLookup: true,
        handles: true,
        connectedWallets: true,
        emailVerification: { mode: 'none', partnerAssertionAllowed: false, version: 1 },
      },
      depositAddresses: {
        ...deposits,
        availableToCredential: deposits.available,
        supportedChainIds: env.networks.map((n) => n.chainId),
        availableChainIds: deposits.available ? env.networks.map((n) => n.chainId) : [],
        supportedNetworks: env.networks.map((n) => ({
          code: n.code,
          chainId: n.chainId,
          chainFamily: n.chainFamily,
          operational: true,
          disabledReason: null,
          assets: assetsOf(n),
        })),
      },
      payments: {
        ...payments,
        availableToCredential: payments.available,
        capabilities: { crypto: true, onramp: false, externalQr: false, externalBank: externalBank.available, card: false },
        methods: {
          direct: { ...payments },
          routing: methodOff,
          onramp: methodOff,
          externalQr: { ...bankMethod, destinationType: 'external_qr' },
          externalBank,
          card: methodOff,
        },
        publicPaymentCreation: publicPaymentCreation(app, env, payments),
      },
      balancesAndTransactions: {
        enabled: balances.entitled,
        availableToCredential: balances.available,
        balances: { enabled: balances.entitled, availableToCredential: balances.available },
        transactions: { enabled: balances.entitled, availableToCredential: balances.available },
      },
      webhooks: {
        supportedEvents: [...EVENT_NAMES],
        recommendedEvents: [...RECOMMENDED_EVENTS],
        eventGroups: EVENT_GROUPS.map((g) => ({ id: g.id, label: g.label, events: [...g.events] })),
        signatures: { ...SIGNATURES },
        deliveryPolicy: { ...DELIVERY_POLICY, retryableStatuses: [...DELIVERY_POLICY.retryableStatuses] },
      },
      vaults: vaultsCapability(moduleState('vaults'), vaultSetup, approvalMailReady(app.environment, runtime.mail)),
    },
    integrations: {
      clientApi: { enabled: false, availableToCredential: false },
      webhooks: { enabled: env.modules.includes('webhooks'), availableToCredential: env.modules.includes('webhooks') },
      partnerConsole: { enabled: false, availableToCredential: false },
    },
    links: env.links,
  };
}

/**
 * The bank countries of the environment (config/environments.json `bankAccounts`), as the config
 * reports them. Paying a bank account needs both modules: bank accounts (linking, the directory) and
 * payments; preparing one needs the bank accounts module alone, as its routes do.
 */
function externalBankMethod(app: AuthenticatedApp, env: TEnvironmentConfig, bank: Availability, payments: Availability) {
  const countries = (env.bankAccounts?.countries ?? []).map((c) => ({
    country: c.country,
    countryName: BANK_COUNTRY_NAMES[c.country].name,
    currency: BANK_COUNTRY_NAMES[c.country].currency,
    rails: c.rails,
    minimumAmountAtomic: c.minimumAmountAtomic,
    maximumAmountAtomic: c.maximumAmountAtomic,
    enabled: c.enabled,
  }));
  const state = availability(bank.entitled && payments.entitled, app.scopes.includes('v2:payments'), bank.operational && payments.operational);
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
    ...state,
    availableToCredential: state.available,
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
