import type { Address } from 'viem';
import type { TGasConfig } from '../config/gas';

/**
 * The EVM networks the service knows by code: an environment turns one on by its code (and the assets
 * it wants), and its RPC URLs come from settings (RPC_URLS_<CODE>). Everything else about a network is
 * here, each figure with the published page it was taken from. Addresses are Circle's own (the issuer's)
 * contracts; a network where Circle lists no EURC has none here. docs/decisions/custody-and-chains.md, "Network catalog and
 * production configuration", says how each figure was chosen.
 */
export interface CatalogAsset {
  symbol: 'USDC' | 'EURC';
  tokenAddress: Address;
  decimals: number;
  /** The issuer's page that lists this contract. */
  source: string;
}

export interface CatalogNetwork {
  code: string;
  aliases: string[];
  name: string;
  chainId: number;
  testnet: boolean;
  /** The mainnet a test network stands in for. */
  testnetOf?: string;
  /** The average time between blocks. */
  blockTimeMs: number;
  /**
   * Blocks a transfer's block must have on top of it (itself included) before we count it final, the
   * published figure it follows (source) and how it was turned into a depth of this chain's blocks (basis).
   */
  confirmations: { depth: number; source: string; basis: string };
  nativeCurrency: { symbol: string; name: string; decimals: 18 };
  /** A block explorer's transaction page; `{txHash}` stands for the hash. */
  explorerTxUrl: string;
  assets: CatalogAsset[];
  /** Fee and top-up figures where this chain's differ from the defaults (src/config/gas.ts). */
  gas?: TGasConfig;
}

const USDC_PAGE = 'https://developers.circle.com/stablecoins/usdc-contract-addresses';
const EURC_PAGE = 'https://developers.circle.com/stablecoins/eurc-contract-addresses';
const CIRCLE_MINT_CONFIRMATIONS = 'https://developers.circle.com/circle-mint/blockchain-confirmations';
const CCTP_TESTNET_CONFIRMATIONS = 'https://developers.circle.com/stablecoins/docs/required-block-confirmations';

const ETH = { symbol: 'ETH', name: 'Ether', decimals: 18 } as const;
const POL = { symbol: 'POL', name: 'POL', decimals: 18 } as const;

const usdc = (tokenAddress: Address): CatalogAsset => ({ symbol: 'USDC', tokenAddress, decimals: 6, source: USDC_PAGE });
const eurc = (tokenAddress: Address): CatalogAsset => ({ symbol: 'EURC', tokenAddress, decimals: 6, source: EURC_PAGE });

/** Circle counts 12 Ethereum blocks after the L2 block reaches L1, "~3 to 9 minutes": the upper bound in L2 blocks. */
const opStackDepth = (blockTimeMs: number) => ({
  depth: Math.ceil((9 * 60 * 1000) / blockTimeMs),
  source: CIRCLE_MINT_CONFIRMATIONS,
  basis: 'Circle Mint: 12 ETH blocks, ~3 to 9 minutes; 9 minutes of this chain’s blocks',
});

const testnetDepth = (depth: number) => ({
  depth,
  source: CCTP_TESTNET_CONFIRMATIONS,
  basis: `Circle CCTP testnet attestation: ${depth} block(s)`,
});

export const NETWORK_CATALOG: readonly CatalogNetwork[] = [
  {
    code: 'ethereum',
    aliases: ['ethereum-mainnet'],
    name: 'Ethereum',
    chainId: 1,
    testnet: false,
    blockTimeMs: 12_000,
    confirmations: { depth: 12, source: CIRCLE_MINT_CONFIRMATIONS, basis: 'Circle Mint: 12 confirmations, ~3 minutes' },
    nativeCurrency: ETH,
    explorerTxUrl: 'https://etherscan.io/tx/{txHash}',
    assets: [usdc('0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48'), eurc('0x1aBaEA1f7C830bD89Acc67eC4af516284b1bC33c')],
  },
  {
    code: 'base',
    aliases: ['base-mainnet'],
    name: 'Base',
    chainId: 8453,
    testnet: false,
    blockTimeMs: 2_000,
    confirmations: opStackDepth(2_000),
    nativeCurrency: ETH,
    explorerTxUrl: 'https://basescan.org/tx/{txHash}',
    assets: [usdc('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'), eurc('0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42')],
  },
  {
    code: 'arbitrum',
    aliases: ['arbitrum-one'],
    name: 'Arbitrum One',
    chainId: 42161,
    testnet: false,
    blockTimeMs: 250,
    confirmations: { depth: 300, source: CIRCLE_MINT_CONFIRMATIONS, basis: 'Circle Mint: 300 confirmations, ~3 minutes' },
    nativeCurrency: ETH,
    explorerTxUrl: 'https://arbiscan.io/tx/{txHash}',
    assets: [usdc('0xaf88d065e77c8cC2239327C5EDb3A432268e5831')],
  },
  {
    code: 'optimism',
    aliases: ['op-mainnet'],
    name: 'OP Mainnet',
    chainId: 10,
    testnet: false,
    blockTimeMs: 2_000,
    confirmations: opStackDepth(2_000),
    nativeCurrency: ETH,
    explorerTxUrl: 'https://optimistic.etherscan.io/tx/{txHash}',
    assets: [usdc('0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85')],
  },
  {
    code: 'polygon',
    aliases: ['polygon-pos'],
    name: 'Polygon PoS',
    chainId: 137,
    testnet: false,
    blockTimeMs: 2_000,
    confirmations: { depth: 50, source: CIRCLE_MINT_CONFIRMATIONS, basis: 'Circle Mint: 50 confirmations, ~2 minutes' },
    nativeCurrency: POL,
    explorerTxUrl: 'https://polygonscan.com/tx/{txHash}',
    assets: [usdc('0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359')],
    // Bor refuses tips under 25 gwei; POL is worth far less than ETH, so the cap and top-ups are larger.
    gas: {
      priorityFeeWei: '30000000000',
      maxFeePerGasWei: '3000000000000',
      minBalanceWei: '500000000000000000',
      topUpWei: '1000000000000000000',
    },
  },
  {
    code: 'ethereum-sepolia',
    aliases: ['sepolia'],
    name: 'Ethereum Sepolia',
    chainId: 11155111,
    testnet: true,
    testnetOf: 'ethereum',
    blockTimeMs: 12_000,
    confirmations: testnetDepth(5),
    nativeCurrency: ETH,
    explorerTxUrl: 'https://sepolia.etherscan.io/tx/{txHash}',
    assets: [usdc('0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238'), eurc('0x08210F9170F89Ab7658F0B5E3fF39b0E03C594D4')],
  },
  {
    code: 'base-sepolia',
    aliases: [],
    name: 'Base Sepolia',
    chainId: 84532,
    testnet: true,
    testnetOf: 'base',
    blockTimeMs: 2_000,
    confirmations: testnetDepth(5),
    nativeCurrency: ETH,
    explorerTxUrl: 'https://sepolia.basescan.org/tx/{txHash}',
    assets: [usdc('0x036CbD53842c5426634e7929541eC2318f3dCF7e'), eurc('0x808456652fdb597867f38412077A9182bf77359F')],
  },
  {
    code: 'arbitrum-sepolia',
    aliases: [],
    name: 'Arbitrum Sepolia',
    chainId: 421614,
    testnet: true,
    testnetOf: 'arbitrum',
    blockTimeMs: 250,
    confirmations: testnetDepth(5),
    nativeCurrency: ETH,
    explorerTxUrl: 'https://sepolia.arbiscan.io/tx/{txHash}',
    assets: [usdc('0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d')],
  },
  {
    code: 'optimism-sepolia',
    aliases: ['op-sepolia'],
    name: 'OP Sepolia',
    chainId: 11155420,
    testnet: true,
    testnetOf: 'optimism',
    blockTimeMs: 2_000,
    confirmations: testnetDepth(5),
    nativeCurrency: ETH,
    explorerTxUrl: 'https://sepolia-optimism.etherscan.io/tx/{txHash}',
    assets: [usdc('0x5fd84259d66Cd46123540766Be93DFE6D43130D7')],
  },
  {
    // Polygon's test network is Amoy (Polygon PoS runs no Sepolia network).
    code: 'polygon-amoy',
    aliases: ['amoy'],
    name: 'Polygon PoS Amoy',
    chainId: 80002,
    testnet: true,
    testnetOf: 'polygon',
    blockTimeMs: 2_000,
    confirmations: testnetDepth(1),
    nativeCurrency: POL,
    explorerTxUrl: 'https://amoy.polygonscan.com/tx/{txHash}',
    assets: [usdc('0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582')],
    gas: {
      priorityFeeWei: '30000000000',
      maxFeePerGasWei: '3000000000000',
      minBalanceWei: '500000000000000000',
      topUpWei: '1000000000000000000',
    },
  },
];

/** The catalog's network of this code or alias; undefined when the catalog has none. */
export function catalogNetwork(code: string): CatalogNetwork | undefined {
  return NETWORK_CATALOG.find((n) => n.code === code || n.aliases.includes(code));
}
