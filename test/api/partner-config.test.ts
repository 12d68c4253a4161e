import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EVENT_NAMES } from '../../src/domain/event-catalog';
import { ZPartnerConfig } from '../../src/domain/partner-config.schemas';
import { call, newApp } from '../support/api-client';

test('GET /v2/partners/config returns the full configuration for the credential', async () => {
  const cred = await newApp({ scopes: ['v2:accounts', 'v2:payments'] });
  const res = await call('/v2/partners/config', { credential: cred });
  assert.equal(res.status, 200);
  const c = res.body;
  ZPartnerConfig.parse(c);
  for (const key of ['id', 'appId', 'organizationId', 'environmentId', 'apiVersion', 'supportedApiVersions', 'namespace', 'scopes', 'credentialType', 'credentialMode', 'status', 'modules', 'compliance', 'fees', 'networks', 'capabilities', 'integrations', 'links']) {
    assert.ok(key in c, `missing ${key}`);
  }
  assert.equal(c.appId, cred.appId);
  assert.equal(c.apiVersion, '2026-09-09');
  assert.deepEqual(c.supportedApiVersions, ['2026-09-09']);
  assert.deepEqual(c.scopes, ['v2:accounts', 'v2:payments']);
  assert.equal(c.credentialMode, 'app_secret');
  assert.equal(c.fees.model, 'deducted_at_final_settlement');
  assert.equal(c.fees.totalFeeBps, c.fees.partnerFeeBps + c.fees.platformFeeBps);

  const deposits = c.modules.find((m: { id: string }) => m.id === 'deposit_addresses');
  assert.equal(deposits.credentialAllowed, false);
  assert.equal(deposits.available, false);
  assert.equal(deposits.disabledReason, 'credential_scope_missing');

  const network = c.networks[0];
  assert.equal(network.chainId, 31337);
  assert.deepEqual(network.supportedAssets[0].minimumDeposit, { amount: '1', amountAtomic: '1000000', inclusive: true });
  assert.equal(network.supportedAssets[0].decimals, 6);

  const hooks = c.capabilities.webhooks;
  assert.deepEqual([...hooks.supportedEvents].sort(), [...EVENT_NAMES].sort());
  assert.equal(hooks.supportedEvents.length, 47);
  assert.ok(!hooks.recommendedEvents.includes('payment.created'));
  assert.ok(!hooks.recommendedEvents.includes('kyc.updated'));
  assert.ok(!hooks.recommendedEvents.includes('vault.failed'));
  assert.ok(hooks.recommendedEvents.includes('payment.succeeded'));
  assert.ok(hooks.recommendedEvents.includes('deposit.settled'));
  assert.ok(!hooks.recommendedEvents.includes('deposit.failed'));
  assert.deepEqual(hooks.deliveryPolicy, {
    guarantee: 'at_least_once',
    retryableStatuses: [408, 425, 429, 500, 502, 503, 504],
    maxAttempts: 3,
    localPrivateDestinationsAllowed: false,
  });
});

test('a production credential sees its own environment, with no networks configured', async () => {
  const cred = await newApp({ environment: 'production' });
  const res = await call('/v2/partners/config', { credential: cred });
  assert.equal(res.status, 200);
  assert.equal(res.body.environmentId, 'env_production');
  assert.deepEqual(res.body.networks, []);
});
