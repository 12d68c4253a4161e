import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadEnvironments, ZVaultsConfig, DEFAULT_ENVIRONMENTS_FILE, type TEnvironmentConfig } from '../../src/config/environments';
import { vaultNetwork, vaultsSetup } from '../../src/domain/vaults/vault-config';

const spendLimit = { defaultAmountAtomic: '1', maxAmountAtomic: '2', currency: 'USD', decimals: 6 };

describe('The vaults config on several networks', () => {
  test('networks[] beside chainId/tokens is accepted; a network twice is refused', () => {
    assert.ok(
      ZVaultsConfig.safeParse({ chainId: 8453, tokens: ['USDC'], spendLimit, resourceVersion: 1 }).success,
      'the one-network shape is unchanged',
    );
    assert.ok(
      ZVaultsConfig.safeParse({
        chainId: 8453,
        tokens: ['USDC'],
        networks: [{ chainId: 1, tokens: ['EURC'] }],
        spendLimit,
        resourceVersion: 1,
      }).success,
    );
    const twice = ZVaultsConfig.safeParse({
      chainId: 8453,
      tokens: ['USDC'],
      networks: [{ chainId: 8453, tokens: ['EURC'] }],
      spendLimit,
      resourceVersion: 1,
    });
    assert.equal(twice.success, false);
    assert.deepEqual(twice.error!.issues[0]!.path, ['networks']);
  });

  test('the setup has every network (the default first) and the tokens of each; a network the environment lacks turns vaults off', () => {
    const sandbox = loadEnvironments(DEFAULT_ENVIRONMENTS_FILE).environments.sandbox;
    const home = sandbox.networks[0]!;
    const other = { ...home, chainId: 777, code: 'other' };
    const env: TEnvironmentConfig = {
      ...sandbox,
      networks: [home, other],
      vaults: { ...sandbox.vaults!, networks: [{ chainId: 777, tokens: ['USDC'] }] },
    };
    const setup = vaultsSetup(env)!;
    assert.deepEqual(
      setup.networks.map((n) => n.chainId),
      [home.chainId, 777],
    );
    assert.equal(setup.network.chainId, home.chainId);
    assert.deepEqual(
      setup.tokens.map((t) => t.chainId),
      [home.chainId, 777],
    );
    assert.equal(vaultNetwork(setup, 777)?.code, 'other');
    assert.equal(vaultNetwork(setup, 5), null);
    assert.equal(vaultsSetup({ ...env, networks: [home] }), null);
  });
});
