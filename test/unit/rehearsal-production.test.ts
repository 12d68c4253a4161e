import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { english, generateMnemonic } from 'viem/accounts';
import { createHdSigner, formatPublicKeys } from '../../src/custody';
import { assertProductionShape, productionEnv, type ProductionInput } from '../../simulate/rehearsal/production';

/** The rehearsal's deployment passes the production check as the service runs it, and only because it is production-shaped. */
describe("The production rehearsal's deployment", () => {
  const input = (rpcHost: string): ProductionInput => ({
    dataDir: mkdtempSync(path.join(tmpdir(), 'rehearsal-production-')),
    databaseUrls: {
      api: 'postgresql://partner_payments_api@127.0.0.1:5432/rehearsal',
      worker: 'postgresql://partner_payments_worker@127.0.0.1:5432/rehearsal',
    },
    temporalAddress: '127.0.0.1:7233',
    temporal: { namespace: 'default', taskQueue: 'partner-payments' },
    serviceSecret: 'x'.repeat(40),
    custody: {
      seedFile: '/run/secrets/seed.txt',
      publicKeys: formatPublicKeys(createHdSigner({ mnemonic: generateMnemonic(english, 256) }).publicKeys),
    },
    rpcUrls: { 'base-sepolia': `http://${rpcHost}:8545`, base: `http://${rpcHost}:8546`, ethereum: `http://${rpcHost}:8547` },
    offramp: { url: 'http://127.0.0.1:9000', callbackSecret: 'y'.repeat(64) },
    receivers: ['127.0.0.1:8443'],
    tls: { keyFile: '/dev/null', certFile: '/dev/null' },
  });

  test('passes the check for both roles: catalog networks, the seed only in the worker, no sandbox switch', () => {
    const env = productionEnv(input('192.0.2.2'));
    const environments = assertProductionShape(env);
    assert.deepEqual(
      environments.environments.sandbox.networks.map((n) => n.chainId),
      [84532],
    );
    assert.deepEqual(
      environments.environments.production.networks.map((n) => n.chainId),
      [8453, 1],
    );
    assert.equal(env.api.DEPLOYMENT, 'production');
    assert.equal(env.api.CUSTODY_MNEMONIC_FILE, undefined);
    assert.equal(env.worker.CUSTODY_MNEMONIC_FILE, '/run/secrets/seed.txt');
    assert.equal(env.api.WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS, 'false');
  });

  test('each role logs in as its own database role, and neither holds the owner’s or the other’s login', () => {
    const env = productionEnv(input('192.0.2.2'));
    assert.match(env.api.API_DATABASE_URL!, /\/\/partner_payments_api@/);
    assert.match(env.worker.WORKER_DATABASE_URL!, /\/\/partner_payments_worker@/);
    for (const name of ['DATABASE_URL', 'WORKER_DATABASE_URL']) assert.equal(env.api[name], undefined, name);
    for (const name of ['DATABASE_URL', 'API_DATABASE_URL']) assert.equal(env.worker[name], undefined, name);
    assert.equal(env.operator.CUSTODY_MNEMONIC_FILE, undefined, 'the operator CLI signs nothing');
    assert.throws(
      () => assertProductionShape({ ...env, api: { ...env.api, WORKER_DATABASE_URL: env.worker.WORKER_DATABASE_URL! } }),
      /the api must not hold WORKER_DATABASE_URL/,
    );
  });

  test('fails it with the chains on loopback, as a deployment pointed at anvil would', () => {
    assert.throws(() => assertProductionShape(productionEnv(input('127.0.0.1'))), /RPC_URLS_BASE_SEPOLIA: URL 1 .* points at a local node/);
  });
});
