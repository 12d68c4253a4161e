import { z } from 'zod';
import { ZPublicPaymentCreation } from '../payments/public-payment.schemas';

/**
 * The shape of GET /v2/partners/config (spec: Partner configuration). Every object is strict: a flag
 * missing or one too many fails the schema, and so the OpenAPI document's response check.
 */
const ZModuleState = z.strictObject({
  entitled: z.boolean(),
  credentialAllowed: z.boolean(),
  operational: z.boolean(),
  available: z.boolean(),
  disabledReason: z.string().nullable(),
});
/** The spec's "availability flags" of a capability group: six fields, everywhere. */
const ZAvailability = ZModuleState.extend({ availableToCredential: z.boolean() });
const ZSwitch = z.strictObject({ enabled: z.boolean(), availableToCredential: z.boolean() });
const ZMinimumDeposit = z.strictObject({ amount: z.string(), amountAtomic: z.string().regex(/^\d+$/), inclusive: z.boolean() });
const ZAsset = z.strictObject({
  symbol: z.string(),
  tokenAddress: z.string(),
  decimals: z.number().int(),
  kind: z.string(),
  minimumDeposit: ZMinimumDeposit,
});
const ZBankMethod = ZAvailability.extend({
  destinationType: z.string(),
  standaloneApi: z.boolean(),
  countries: z.array(
    z.strictObject({
      country: z.string(),
      countryName: z.string(),
      currency: z.string(),
      rails: z.array(z.string()),
      minimumAmountAtomic: z.string(),
      maximumAmountAtomic: z.string(),
      enabled: z.boolean(),
    }),
  ),
  preparationAvailable: z.boolean(),
  paymentExecutionAvailable: z.boolean(),
});

export const ZPartnerConfig = z.strictObject({
  id: z.string(),
  appId: z.string(),
  organizationId: z.string(),
  environmentId: z.string(),
  apiVersion: z.string(),
  supportedApiVersions: z.array(z.string()),
  namespace: z.string(),
  scopes: z.array(z.string()),
  credentialType: z.string(),
  credentialMode: z.literal('app_secret'),
  status: z.string(),
  modules: z.array(
    ZModuleState.extend({
      id: z.string(),
      name: z.string(),
      description: z.string(),
      scopes: z.array(z.string()),
      defaultEnabled: z.boolean(),
      optional: z.boolean(),
    }),
  ),
  compliance: z.strictObject({
    partnerKyb: z.strictObject({ status: z.string(), updatedAt: z.string().nullable() }),
    requirements: z.strictObject({ partnerFiatAccess: z.string(), individualUpaFiatAccess: z.string(), businessUpaFiatAccess: z.string() }),
  }),
  fees: z.strictObject({
    partnerFeeBps: z.number().int(),
    partnerFeePercent: z.string(),
    platformFeeBps: z.number().int(),
    platformFeePercent: z.string(),
    totalFeeBps: z.number().int(),
    totalFeePercent: z.string(),
    model: z.literal('deducted_at_final_settlement'),
    currency: z.literal('USD'),
  }),
  networks: z.array(
    z.strictObject({
      code: z.string(),
      aliases: z.array(z.string()),
      chainFamily: z.string(),
      chainId: z.number().int(),
      depositAddresses: z.strictObject({
        supported: z.boolean(),
        provider: z.string(),
        operational: z.boolean(),
        disabledReason: z.string().nullable(),
      }),
      connectedWallets: z.strictObject({ supported: z.boolean() }),
      settlement: z.strictObject({ supported: z.boolean() }),
      paymentCollection: z.strictObject({
        supported: z.boolean(),
        provider: z.string(),
        network: z.string(),
        configured: z.boolean(),
        detectionMode: z.string(),
        disabledReason: z.string().nullable(),
      }),
      defaultAsset: z.string(),
      supportedAssets: z.array(ZAsset),
    }),
  ),
  capabilities: z.strictObject({
    accounts: ZAvailability.extend({
      accountIdLookup: z.boolean(),
      externalUserIdLookup: z.boolean(),
      handles: z.boolean(),
      connectedWallets: z.boolean(),
      emailVerification: z.strictObject({ mode: z.string(), partnerAssertionAllowed: z.boolean(), version: z.number().int() }),
    }),
    depositAddresses: ZAvailability.extend({
      supportedChainIds: z.array(z.number().int()),
      availableChainIds: z.array(z.number().int()),
      supportedNetworks: z.array(
        z.strictObject({
          code: z.string(),
          chainId: z.number().int(),
          chainFamily: z.string(),
          operational: z.boolean(),
          disabledReason: z.string().nullable(),
          assets: z.array(ZAsset),
        }),
      ),
    }),
    payments: ZAvailability.extend({
      capabilities: z.strictObject({
        crypto: z.boolean(),
        onramp: z.boolean(),
        externalQr: z.boolean(),
        externalBank: z.boolean(),
        card: z.boolean(),
      }),
      methods: z.strictObject({
        direct: ZAvailability,
        routing: ZAvailability,
        onramp: ZAvailability,
        externalQr: ZBankMethod,
        externalBank: ZBankMethod.extend({ directoryEndpoint: z.string() }),
        card: ZAvailability,
      }),
      publicPaymentCreation: ZPublicPaymentCreation,
    }),
    balancesAndTransactions: ZSwitch.extend({ balances: ZSwitch, transactions: ZSwitch }),
    webhooks: z.strictObject({
      supportedEvents: z.array(z.string()),
      recommendedEvents: z.array(z.string()),
      eventGroups: z.array(z.strictObject({ id: z.string(), label: z.string(), events: z.array(z.string()) })),
      signatures: z.record(z.string(), z.string()),
      deliveryPolicy: z.strictObject({
        guarantee: z.literal('at_least_once'),
        retryableStatuses: z.array(z.number().int()),
        maxAttempts: z.number().int(),
        localPrivateDestinationsAllowed: z.boolean(),
      }),
    }),
    vaults: ZAvailability.extend({
      scope: z.literal('v2:vaults'),
      runtime: z.string(),
      ownershipModes: z.strictObject({ external: z.boolean(), stableyard: z.boolean() }),
      managedApproval: z.strictObject({ method: z.string(), ready: z.boolean(), disabledReason: z.string().nullable() }),
      spendLimit: z.strictObject({
        defaultAmountAtomic: z.string(),
        maxAmountAtomic: z.string(),
        currency: z.string(),
        decimals: z.number().int(),
        period: z.string(),
      }),
      yieldProviders: z.array(z.string()),
      tokens: z.array(
        z.strictObject({ symbol: z.string(), chainId: z.number().int(), tokenAddress: z.string(), decimals: z.number().int() }),
      ),
      resourceVersion: z.number().int(),
    }),
  }),
  integrations: z.strictObject({ clientApi: ZSwitch, webhooks: ZSwitch, partnerConsole: ZSwitch }),
  links: z.strictObject({ docs: z.string(), openapi: z.string(), dashboard: z.string().nullable() }),
});
export type TPartnerConfig = z.infer<typeof ZPartnerConfig>;
