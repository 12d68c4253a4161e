import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config';
import { DEFAULT_ENVIRONMENTS_FILE, loadEnvironments, loadEnvironmentsReport } from '../../src/config/environments';
import { rpcUrlSetting } from '../../src/config/network-settings';
import { createLogger } from '../../src/logger';
import { loadServiceEnvironments } from '../../src/runtime/service-environments';

const dir = mkdtempSync(path.join(os.tmpdir(), 'network-settings-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The bundled environments file with the production environment's networks replaced. */
function fileWith(networks: unknown[], name = 'envs.json'): string {
  const envs = JSON.parse(readFileSync(DEFAULT_ENVIRONMENTS_FILE, 'utf8'));
  envs.environments.production.networks = networks;
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(envs));
  return file;
}

describe('RPC URL settings', () => {
  test('RPC_URLS_<CODE> holds comma-separated URLs, in failover order', () => {
    const config = loadConfig({
      RPC_URLS_BASE: 'https://a.example/v1/key, https://b.example/',
      RPC_URLS_ETHEREUM_SEPOLIA: 'https://c.example',
    });
    assert.deepEqual(config.rpcUrls, {
      RPC_URLS_BASE: ['https://a.example/v1/key', 'https://b.example/'],
      RPC_URLS_ETHEREUM_SEPOLIA: ['https://c.example'],
    });
    assert.deepEqual(loadConfig({}).rpcUrls, {});
  });

  test('a URL that is not http(s) is refused with the setting’s name', () => {
    assert.throws(
      () => loadConfig({ RPC_URLS_BASE: 'https://a.example,not a url' }),
      (err: Error) => err instanceof ConfigError && /RPC_URLS_BASE/.test(err.message),
    );
    assert.throws(() => loadConfig({ RPC_URLS_BASE: 'ftp://a.example' }), /RPC_URLS_BASE/);
    assert.throws(() => loadConfig({ RPC_URLS_BASE: ' , ' }), /RPC_URLS_BASE/);
  });

  test('the setting of a network code', () => {
    assert.equal(rpcUrlSetting('base'), 'RPC_URLS_BASE');
    assert.equal(rpcUrlSetting('ethereum-sepolia'), 'RPC_URLS_ETHEREUM_SEPOLIA');
    assert.equal(rpcUrlSetting('anvil'), 'RPC_URLS_ANVIL');
  });
});

describe('environments enable catalog networks by code', () => {
  test('a catalog network expands to the full network config, its RPC URLs from the setting', () => {
    const file = fileWith([{ code: 'base', assets: ['USDC', 'EURC'] }]);
    const envs = loadEnvironments(file, { rpcUrls: { RPC_URLS_BASE: ['https://a.example', 'https://b.example'] } });
    const [base] = envs.environments.production.networks;
    assert.deepEqual(base, {
      code: 'base',
      name: 'Base',
      aliases: ['base-mainnet'],
      chainFamily: 'evm',
      chainId: 8453,
      rpcUrl: 'https://a.example',
      fallbackRpcUrls: ['https://b.example'],
      confirmations: 270,
      blockTimeMs: 2000,
      defaultAsset: 'USDC',
      assets: [
        {
          symbol: 'USDC',
          tokenAddress: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
          decimals: 6,
          kind: 'token',
          minimumDeposit: { amount: '1', inclusive: true },
        },
        {
          symbol: 'EURC',
          tokenAddress: '0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42',
          decimals: 6,
          kind: 'token',
          minimumDeposit: { amount: '1', inclusive: true },
        },
      ],
      explorerTxUrl: 'https://basescan.org/tx/{txHash}',
    });
    // The sandbox's anvil network is not in the catalog and stays as the file has it.
    assert.equal(envs.environments.sandbox.networks[0]!.code, 'anvil');
    assert.equal(envs.environments.sandbox.networks[0]!.rpcUrl, 'http://127.0.0.1:8545');
  });

  test('an environment may set the depth, the default asset and each asset’s minimum deposit', () => {
    const file = fileWith([
      {
        code: 'ethereum',
        confirmations: 2,
        defaultAsset: 'EURC',
        assets: [{ symbol: 'USDC', minimumDeposit: { amount: '5', inclusive: false } }, 'EURC'],
      },
    ]);
    const [eth] = loadEnvironments(file, { rpcUrls: { RPC_URLS_ETHEREUM: ['https://eth.example'] } }).environments.production.networks;
    assert.equal(eth!.confirmations, 2);
    assert.equal(eth!.defaultAsset, 'EURC');
    assert.deepEqual(eth!.assets[0]!.minimumDeposit, { amount: '5', inclusive: false });
    assert.deepEqual(eth!.fallbackRpcUrls, []);
  });

  test('a network without an RPC URL is left out, and the report says which setting it needs', () => {
    const file = fileWith([
      { code: 'base', assets: ['USDC'] },
      { code: 'ethereum', assets: ['USDC'] },
    ]);
    const report = loadEnvironmentsReport(file, { rpcUrls: { RPC_URLS_ETHEREUM: ['https://eth.example'] } });
    assert.deepEqual(
      report.environments.environments.production.networks.map((n) => n.code),
      ['ethereum'],
    );
    assert.deepEqual(report.leftOut, [{ environment: 'production', code: 'base', chainId: 8453, setting: 'RPC_URLS_BASE' }]);
    assert.deepEqual(loadEnvironmentsReport(DEFAULT_ENVIRONMENTS_FILE).leftOut, []);
  });

  test('a setting replaces the RPC URL a full network config has in the file', () => {
    const envs = loadEnvironments(DEFAULT_ENVIRONMENTS_FILE, { rpcUrls: { RPC_URLS_ANVIL: ['http://127.0.0.1:1', 'http://127.0.0.1:2'] } });
    const anvil = envs.environments.sandbox.networks[0]!;
    assert.equal(anvil.rpcUrl, 'http://127.0.0.1:1');
    assert.deepEqual(anvil.fallbackRpcUrls, ['http://127.0.0.1:2']);
  });

  test('an unknown code, or an asset the catalog has no contract for, is refused with its path', () => {
    assert.throws(
      () => loadEnvironments(fileWith([{ code: 'nowhere', assets: ['USDC'] }], 'a.json')),
      /no network nowhere in the catalog.*environments\.production\.networks\[0\]\.code/s,
    );
    assert.throws(() => loadEnvironments(fileWith([{ code: 'arbitrum', assets: ['EURC'] }], 'b.json')), /no EURC contract on arbitrum/);
    assert.throws(() => loadEnvironments(fileWith([{ code: 'base', assets: [] }], 'c.json')), /invalid environments file/);
  });

  test('a public Payment destination on a left-out network is not offered', () => {
    const envs = JSON.parse(readFileSync(DEFAULT_ENVIRONMENTS_FILE, 'utf8'));
    envs.environments.production.networks = [{ code: 'base', assets: ['USDC'] }];
    envs.environments.production.publicPayments.destinations = [
      { chainId: 8453, assetSymbol: 'USDC', minimumAmount: '1', maximumAmount: '10' },
    ];
    const file = path.join(dir, 'destinations.json');
    writeFileSync(file, JSON.stringify(envs));
    assert.deepEqual(loadEnvironments(file).environments.production.publicPayments!.destinations, []);
    assert.equal(
      loadEnvironments(file, { rpcUrls: { RPC_URLS_BASE: ['https://b.example'] } }).environments.production.publicPayments!.destinations
        .length,
      1,
    );
  });
});

describe('the sandbox deployment and networks without an RPC URL', () => {
  test('are left out of what the service runs (no chain client, no scanner), with the reason in the log', () => {
    const lines: any[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    const file = fileWith(
      [
        { code: 'base', assets: ['USDC', 'EURC'] },
        { code: 'ethereum', assets: ['USDC'] },
      ],
      'sandbox-deployment.json',
    );
    const config = loadConfig({ DEPLOYMENT: 'sandbox', ENVIRONMENTS_FILE: file, RPC_URLS_ETHEREUM: 'https://eth.example' });
    const envs = loadServiceEnvironments(config, logger, ['api', 'worker']);
    assert.deepEqual(
      envs.environments.production.networks.map((n) => n.code),
      ['ethereum'],
    );
    assert.equal(envs.environments.sandbox.networks[0]!.code, 'anvil');
    const warned = lines.filter((l) => l.level === 'warn');
    assert.equal(warned.length, 1);
    assert.deepEqual(
      [warned[0].network, warned[0].chainId, warned[0].setting, warned[0].environment],
      ['base', 8453, 'RPC_URLS_BASE', 'production'],
    );
    assert.match(warned[0].msg, /left out: no RPC URL \(set RPC_URLS_BASE\)/);
  });
});
