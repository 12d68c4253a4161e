import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ZChainId, zInt4 } from '../platform/int4';
import { projectRoot } from '../platform/project-root';
import { resolveNetworks, type LeftOutNetwork } from './network-settings';
import { ZDecimal, ZNetworkConfig, ZNetworkEntry, type TAssetConfig, type TNetworkConfig } from './network-schemas';

// The networks' schemas live in ./network-schemas (./network-settings reads them too); the
// environments file's public face names them here as well.
export { ENVIRONMENTS, ZAssetConfig, ZCatalogNetworkRef, ZNetworkConfig, ZNetworkEntry } from './network-schemas';
export type { EnvironmentName, TAssetConfig, TCatalogNetworkRef, TNetworkConfig, TNetworkEntry } from './network-schemas';

export const MODULE_IDS = [
  'accounts',
  'payments',
  'deposit_addresses',
  'vaults',
  'webhooks',
  'balances_and_transactions',
  'bank_accounts',
] as const;
export type ModuleId = (typeof MODULE_IDS)[number];

const ZAtomic = z.string().regex(/^[1-9]\d{0,77}$/, 'a positive integer string');

/**
 * The vaults module of an environment: its default network and tokens (symbols of that network), any
 * further networks with theirs, and spend-limit bounds. One vault per account serves every network
 * listed (its address is the same on each EVM chain); `chainId` is the default a new vault records.
 */
export const ZVaultsConfig = z
  .object({
    chainId: ZChainId,
    tokens: z.array(z.string().min(1)).min(1),
    networks: z.array(z.object({ chainId: ZChainId, tokens: z.array(z.string().min(1)).min(1) })).optional(),
    spendLimit: z.object({
      defaultAmountAtomic: ZAtomic,
      maxAmountAtomic: ZAtomic,
      currency: z.string().min(1),
      decimals: z.number().int().min(0).max(36),
    }),
    resourceVersion: zInt4({ min: 1 }),
  })
  .refine((v) => BigInt(v.spendLimit.defaultAmountAtomic) <= BigInt(v.spendLimit.maxAmountAtomic), {
    message: 'spendLimit.defaultAmountAtomic must not exceed maxAmountAtomic',
  })
  .refine((v) => new Set([v.chainId, ...(v.networks ?? []).map((n) => n.chainId)]).size === 1 + (v.networks?.length ?? 0), {
    message: 'each vault network at most once (chainId is the first)',
    path: ['networks'],
  });

/** The countries where bank accounts can be linked (and, with the payout half, paid), as code knows them. */
export const BANK_COUNTRIES = ['US', 'PH', 'VN'] as const;
export type BankCountry = (typeof BANK_COUNTRIES)[number];

/**
 * Linked bank accounts in an environment: the off-ramp provider that verifies and pays them, and each
 * country this environment enables. Amount bounds are atomic units of the Payment's asset (USDC, 6
 * decimals), what the config's externalBank countries report. Absent: no country is enabled.
 */
export const ZBankAccountsConfig = z.object({
  providerCode: z.string().min(1),
  countries: z
    .array(
      z
        .object({
          country: z.enum(BANK_COUNTRIES),
          enabled: z.boolean(),
          rails: z.array(z.string().min(1)).min(1),
          minimumAmountAtomic: ZAtomic,
          maximumAmountAtomic: ZAtomic,
        })
        .refine((c) => BigInt(c.minimumAmountAtomic) <= BigInt(c.maximumAmountAtomic), {
          message: 'minimumAmountAtomic must not exceed maximumAmountAtomic',
        }),
    )
    .refine((cs) => new Set(cs.map((c) => c.country)).size === cs.length, { message: 'each country at most once' }),
});

/**
 * Public Payment creation (POST /v2/public/apps/{appId}/payments): an anonymous payer's wallet creates
 * a receive Payment to an account that accepts public Payments. Each destination is a network and
 * asset of this environment, with the amount bounds a public Payment may ask for (decimal strings in
 * the asset's units). The rate limit is per client IP, for both public routes together.
 */
export const ZPublicPaymentsConfig = z.object({
  enabled: z.boolean(),
  paymentTtlSeconds: z.number().int().min(60).max(86_400),
  allowedFiatCurrencies: z.array(z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code')),
  rateLimit: z.object({ points: zInt4({ min: 1 }), windowSeconds: zInt4({ min: 1 }) }),
  destinations: z.array(
    z.object({
      chainId: ZChainId,
      assetSymbol: z.string().min(1),
      minimumAmount: ZDecimal,
      maximumAmount: ZDecimal,
      logoUrl: z
        .url({ protocol: /^https?$/ })
        .nullable()
        .default(null),
    }),
  ),
});

const environmentShape = {
  organizationId: z.string(),
  environmentId: z.string(),
  namespace: z.string(),
  modules: z.array(z.enum(MODULE_IDS)),
  // Deducted from the amount (src/domain/amounts/pure/fees.ts): together at most all of it.
  fees: z
    .object({
      partnerFeeBps: z.number().int().min(0).max(10_000),
      platformFeeBps: z.number().int().min(0).max(10_000),
    })
    .refine((f) => f.partnerFeeBps + f.platformFeeBps <= 10_000, 'partnerFeeBps and platformFeeBps together are at most 10000 (100%)'),
  vaults: ZVaultsConfig.optional(),
  bankAccounts: ZBankAccountsConfig.optional(),
  /** Absent: public Payment creation is off in this environment. */
  publicPayments: ZPublicPaymentsConfig.optional(),
  // dashboard null: the partner dashboard this service serves (/dashboard), when it serves one.
  links: z.object({ docs: z.string(), openapi: z.string(), dashboard: z.string().nullable() }),
};

export const ZEnvironmentConfig = z.object({ ...environmentShape, networks: z.array(ZNetworkConfig) }).superRefine((env, ctx) => {
  // A destination must be a configured network and asset, its bounds within the asset's scale and
  // ordered, and no lower than the asset's minimum deposit (below it, creation would refuse anyway).
  env.publicPayments?.destinations.forEach((d, i) => {
    const path = ['publicPayments', 'destinations', i];
    const asset = env.networks.find((n) => n.chainId === d.chainId)?.assets.find((a) => a.symbol === d.assetSymbol);
    if (!asset)
      return ctx.addIssue({ code: 'custom', path, message: `chain ${d.chainId} has no asset ${d.assetSymbol} in this environment` });
    const atomic = (v: string) => {
      const [whole, frac = ''] = v.split('.');
      return frac.length > asset.decimals ? null : BigInt(whole! + frac.padEnd(asset.decimals, '0'));
    };
    const [min, max, floor] = [atomic(d.minimumAmount), atomic(d.maximumAmount), atomic(asset.minimumDeposit.amount)];
    if (min === null || max === null)
      return ctx.addIssue({ code: 'custom', path, message: `amounts have at most ${asset.decimals} decimals` });
    if (min > max) ctx.addIssue({ code: 'custom', path, message: 'minimumAmount must not exceed maximumAmount' });
    if (floor !== null && min < floor)
      ctx.addIssue({ code: 'custom', path, message: `minimumAmount is below the asset's minimumDeposit ${asset.minimumDeposit.amount}` });
  });
});

const fileShape = {
  apiVersion: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  supportedApiVersions: z.array(z.string()).min(1),
};

export const ZEnvironmentsFile = z.object({
  ...fileShape,
  environments: z.object({ sandbox: ZEnvironmentConfig, production: ZEnvironmentConfig }),
});

/** The file as written: networks in full or by catalog code (resolved at load, loadEnvironmentsReport). */
const ZEnvironmentSource = z.object({ ...environmentShape, networks: z.array(ZNetworkEntry) });
export const ZEnvironmentsSourceFile = z.object({
  ...fileShape,
  environments: z.object({ sandbox: ZEnvironmentSource, production: ZEnvironmentSource }),
});

export type TVaultsConfig = z.infer<typeof ZVaultsConfig>;
export type TBankAccountsConfig = z.infer<typeof ZBankAccountsConfig>;
export type TPublicPaymentsConfig = z.infer<typeof ZPublicPaymentsConfig>;
export type TBankCountryConfig = TBankAccountsConfig['countries'][number];
export type TEnvironmentConfig = z.infer<typeof ZEnvironmentConfig>;
export type TEnvironments = z.infer<typeof ZEnvironmentsFile>;

// From the project root, not __dirname: the compiled module lives in dist/src/config/.
export const DEFAULT_ENVIRONMENTS_FILE = path.join(projectRoot(), 'config', 'environments.json');

export interface EnvironmentsReport {
  environments: TEnvironments;
  /** Networks named in the file that have no RPC URL here: not in `environments` (the caller logs why). */
  leftOut: LeftOutNetwork[];
}

/** `rpcUrls`: the RPC_URLS_<CODE> settings (config.rpcUrls). */
export interface LoadEnvironmentsOptions {
  rpcUrls?: Record<string, string[]>;
}

/** The environments file, its catalog networks expanded and RPC URLs taken from the settings. */
export function loadEnvironmentsReport(file = DEFAULT_ENVIRONMENTS_FILE, opts: LoadEnvironmentsOptions = {}): EnvironmentsReport {
  const raw: unknown = JSON.parse(readFileSync(file, 'utf8'));
  const source = ZEnvironmentsSourceFile.safeParse(raw);
  if (!source.success) throw new Error(`invalid environments file ${file}: ${z.prettifyError(source.error)}`);
  const rpcUrls = opts.rpcUrls ?? {};
  const sandbox = resolveNetworks('sandbox', source.data.environments.sandbox, rpcUrls);
  const production = resolveNetworks('production', source.data.environments.production, rpcUrls);
  const parsed = ZEnvironmentsFile.safeParse({ ...source.data, environments: { sandbox: sandbox.env, production: production.env } });
  if (!parsed.success) throw new Error(`invalid environments file ${file}: ${z.prettifyError(parsed.error)}`);
  return { environments: parsed.data, leftOut: [...sandbox.leftOut, ...production.leftOut] };
}

export function loadEnvironments(file = DEFAULT_ENVIRONMENTS_FILE, opts: LoadEnvironmentsOptions = {}): TEnvironments {
  return loadEnvironmentsReport(file, opts).environments;
}

/** Replaces a network's RPC URL, e.g. with the port of the anvil node a test or `npm start` runs. */
export function withRpcUrl(envs: TEnvironments, chainId: number, rpcUrl: string): TEnvironments {
  const patch = (e: TEnvironmentConfig): TEnvironmentConfig => ({
    ...e,
    networks: e.networks.map((n) => (n.chainId === chainId ? { ...n, rpcUrl, fallbackRpcUrls: [] } : n)),
  });
  return {
    ...envs,
    environments: {
      sandbox: patch(envs.environments.sandbox),
      production: patch(envs.environments.production),
    },
  };
}

export function findNetwork(env: TEnvironmentConfig, chainId: number): TNetworkConfig | undefined {
  return env.networks.find((n) => n.chainId === chainId);
}

export function findAsset(network: TNetworkConfig, assetCode: string): TAssetConfig | undefined {
  return network.assets.find((a) => a.symbol === assetCode);
}
