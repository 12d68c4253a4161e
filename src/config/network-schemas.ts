// The schemas of a network in the environments file, and the environments' names: what both the
// environments file (./environments) and the networks' settings (./network-settings) read, so neither
// imports the other.
import { z } from 'zod';
import { catalogNetwork } from '../chain/network-catalog';
import { ZChainId, zInt4 } from '../platform/int4';
import { ZGasConfig } from './gas';

/** The app environments, each offering what GET /v2/partners/config shows. */
export const ENVIRONMENTS = ['sandbox', 'production'] as const;
export type EnvironmentName = (typeof ENVIRONMENTS)[number];

export const ZDecimal = z.string().regex(/^\d+(\.\d+)?$/, 'a non-negative decimal string');
const ZAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'an EVM address');

export const ZAssetConfig = z.object({
  symbol: z.string().min(1),
  tokenAddress: ZAddress,
  decimals: z.number().int().min(0).max(36),
  kind: z.literal('token'),
  minimumDeposit: z.object({ amount: ZDecimal, inclusive: z.boolean() }),
});

export const ZNetworkConfig = z.object({
  code: z.string().min(1),
  /** The network's name as payers know it (the hosted checkout and public Payment destinations show it); the code when absent. */
  name: z.string().min(1).optional(),
  aliases: z.array(z.string()).default([]),
  chainFamily: z.literal('evm'),
  chainId: ZChainId,
  rpcUrl: z.string().min(1),
  /** Further RPC URLs, tried in this order when rpcUrl fails (viem's fallback transport). */
  fallbackRpcUrls: z.array(z.string().min(1)).default([]),
  confirmations: zInt4({ min: 1 }),
  /** The average time between blocks: live finality's estimate until the scanner has measured it. */
  blockTimeMs: zInt4({ min: 1 }).optional(),
  defaultAsset: z.string().min(1),
  assets: z.array(ZAssetConfig).min(1),
  /** A block explorer's transaction page, `{txHash}` standing for the hash (the operator console links it); unset: the console's own receipt page. */
  explorerTxUrl: z
    .url()
    .refine((u) => u.includes('{txHash}'), 'a URL with {txHash} in it')
    .optional(),
  /** Fee cap and tip, gas treasury top-ups (src/config/gas.ts); defaults when absent. */
  gas: ZGasConfig.optional(),
});

/**
 * A network of the catalog (src/chain/network-catalog.ts), turned on by its code with the assets this
 * environment offers; the catalog supplies the rest, the settings its RPC URLs (RPC_URLS_<CODE>).
 */
export const ZCatalogNetworkRef = z
  .strictObject({
    code: z.string().min(1),
    assets: z
      .array(z.union([z.string().min(1), z.strictObject({ symbol: z.string().min(1), minimumDeposit: ZAssetConfig.shape.minimumDeposit })]))
      .min(1),
    defaultAsset: z.string().min(1).optional(),
    /** Deeper (or, on a test chain, shallower) than the catalog's depth. */
    confirmations: zInt4({ min: 1 }).optional(),
    explorerTxUrl: ZNetworkConfig.shape.explorerTxUrl,
    /** Over the catalog's gas figures, setting by setting. */
    gas: ZGasConfig.optional(),
  })
  .superRefine((ref, ctx) => {
    const network = catalogNetwork(ref.code);
    if (!network) return ctx.addIssue({ code: 'custom', path: ['code'], message: `no network ${ref.code} in the catalog` });
    const symbols = ref.assets.map((a) => (typeof a === 'string' ? a : a.symbol));
    symbols.forEach((symbol, i) => {
      if (!network.assets.some((a) => a.symbol === symbol))
        ctx.addIssue({ code: 'custom', path: ['assets', i], message: `the catalog has no ${symbol} contract on ${network.code}` });
    });
    if (ref.defaultAsset && !symbols.includes(ref.defaultAsset))
      ctx.addIssue({ code: 'custom', path: ['defaultAsset'], message: 'one of the assets' });
  });

/** A network as the environments file may give it: in full (the sandbox's anvil), or by catalog code. */
export const ZNetworkEntry = z.union([ZNetworkConfig, ZCatalogNetworkRef]);

export type TAssetConfig = z.infer<typeof ZAssetConfig>;
export type TNetworkConfig = z.infer<typeof ZNetworkConfig>;
export type TCatalogNetworkRef = z.infer<typeof ZCatalogNetworkRef>;
export type TNetworkEntry = z.infer<typeof ZNetworkEntry>;
