import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { getAddress } from 'viem';
import { NETWORK_CATALOG, catalogNetwork } from '../../src/chain/network-catalog';

const MAINNETS = ['ethereum', 'base', 'arbitrum', 'optimism', 'polygon'];
const TESTNETS = ['ethereum-sepolia', 'base-sepolia', 'arbitrum-sepolia', 'optimism-sepolia', 'polygon-amoy'];
const isHttpsUrl = (u: string) => new URL(u).protocol === 'https:';

describe('network catalog', () => {
  test('holds the five mainnets and the test network of each, by code', () => {
    assert.deepEqual(NETWORK_CATALOG.map((n) => n.code).sort(), [...MAINNETS, ...TESTNETS].sort());
    for (const code of TESTNETS) {
      const n = catalogNetwork(code)!;
      assert.equal(n.testnet, true, code);
      assert.ok(n.testnetOf && MAINNETS.includes(n.testnetOf), `${code} names the mainnet it tests`);
    }
    for (const code of MAINNETS) assert.equal(catalogNetwork(code)!.testnet, false, code);
    assert.equal(catalogNetwork('nowhere'), undefined);
  });

  test('chain ids and codes (aliases included) are unique', () => {
    const ids = NETWORK_CATALOG.map((n) => n.chainId);
    assert.equal(new Set(ids).size, ids.length);
    const names = NETWORK_CATALOG.flatMap((n) => [n.code, ...n.aliases]);
    assert.equal(new Set(names).size, names.length);
    for (const n of NETWORK_CATALOG) assert.match(n.code, /^[a-z][a-z0-9-]*$/);
  });

  test('the well-known chain ids', () => {
    const byCode = Object.fromEntries(NETWORK_CATALOG.map((n) => [n.code, n.chainId]));
    assert.deepEqual(byCode, {
      ethereum: 1,
      base: 8453,
      arbitrum: 42161,
      optimism: 10,
      polygon: 137,
      'ethereum-sepolia': 11155111,
      'base-sepolia': 84532,
      'arbitrum-sepolia': 421614,
      'optimism-sepolia': 11155420,
      'polygon-amoy': 80002,
    });
  });

  test('every network has a block time, a confirmation depth with its published source, a native gas token and an explorer', () => {
    for (const n of NETWORK_CATALOG) {
      assert.ok(n.blockTimeMs > 0, n.code);
      assert.ok(Number.isInteger(n.confirmations.depth) && n.confirmations.depth >= 1, n.code);
      assert.ok(isHttpsUrl(n.confirmations.source), `${n.code} confirmation source`);
      assert.ok(n.confirmations.basis.length > 0, n.code);
      assert.match(n.nativeCurrency.symbol, /^[A-Z]+$/);
      assert.equal(n.nativeCurrency.decimals, 18);
      assert.ok(n.explorerTxUrl.includes('{txHash}') && isHttpsUrl(n.explorerTxUrl.replace('{txHash}', '0x')), n.code);
    }
  });

  test('every asset is the issuer’s: an EIP-55 checksummed address, 6 decimals, and the page it was taken from', () => {
    for (const n of NETWORK_CATALOG) {
      assert.ok(n.assets.length >= 1, `${n.code} has USDC at least`);
      assert.equal(new Set(n.assets.map((a) => a.symbol)).size, n.assets.length, `${n.code}: each symbol once`);
      for (const a of n.assets) {
        assert.ok(['USDC', 'EURC'].includes(a.symbol));
        assert.equal(a.tokenAddress, getAddress(a.tokenAddress), `${n.code} ${a.symbol} is checksummed`);
        assert.equal(a.decimals, 6);
        assert.ok(
          isHttpsUrl(a.source) && new URL(a.source).hostname === 'developers.circle.com',
          `${n.code} ${a.symbol} source is Circle's page`,
        );
      }
    }
  });

  test('the addresses the two-chain set-up uses', () => {
    const asset = (code: string, symbol: string) => catalogNetwork(code)!.assets.find((a) => a.symbol === symbol)?.tokenAddress;
    assert.equal(asset('ethereum', 'USDC'), '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48');
    assert.equal(asset('ethereum', 'EURC'), '0x1aBaEA1f7C830bD89Acc67eC4af516284b1bC33c');
    assert.equal(asset('base', 'USDC'), '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913');
    assert.equal(asset('base', 'EURC'), '0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42');
    // Circle issues no EURC on these: none is listed.
    for (const code of ['arbitrum', 'optimism', 'polygon']) assert.equal(asset(code, 'EURC'), undefined, code);
  });
});
