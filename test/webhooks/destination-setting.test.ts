import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config';
import { isTrustedDestination } from '../../src/webhooks/destination';
import { validateEndpointUrl } from '../../src/domain/webhooks/endpoints';

/**
 * Whether webhooks may go to local or private destinations is one setting, read once by loadConfig:
 * the API (endpoint creation, the config's deliveryPolicy), the worker (delivery) and the CLI
 * (endpoint creation) all take config.webhooks, so none can disagree with another.
 */
describe('The private-destination setting', () => {
  const production = { DATABASE_URL: 'postgresql://db.internal/pp', TEMPORAL_ADDRESS: 'temporal.internal:7233' };

  test("is the spec's false in the production shape, and on for the embedded stack (npm start, its CLI)", () => {
    assert.equal(loadConfig(production).webhooks.allowPrivateDestinations, false);
    assert.equal(loadConfig({}).webhooks.allowPrivateDestinations, true);
    assert.equal(loadConfig({ DATABASE_URL: production.DATABASE_URL }).webhooks.allowPrivateDestinations, true);
  });

  test('WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS, when set, wins either way', () => {
    assert.equal(loadConfig({ ...production, WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS: 'true' }).webhooks.allowPrivateDestinations, true);
    assert.equal(loadConfig({ WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS: 'false' }).webhooks.allowPrivateDestinations, false);
  });

  test('WEBHOOKS_TRUSTED_DESTINATIONS names exact host:port pairs that pass though private, and nothing else', async () => {
    const config = loadConfig({ ...production, WEBHOOKS_TRUSTED_DESTINATIONS: '127.0.0.1:8443, Receiver.internal:443' });
    assert.deepEqual(config.webhooks.trustedDestinations, ['127.0.0.1:8443', 'receiver.internal:443']);
    const policy = config.webhooks;
    assert.equal(isTrustedDestination(new URL('https://127.0.0.1:8443/hooks'), policy), true);
    assert.equal(isTrustedDestination(new URL('https://receiver.internal/hooks'), policy), true);
    assert.equal(isTrustedDestination(new URL('https://127.0.0.1:8444/hooks'), policy), false);
    assert.equal(isTrustedDestination(new URL('https://10.0.0.1/hooks'), policy), false);
    assert.equal(await validateEndpointUrl('https://127.0.0.1:8443/hooks', policy), 'https://127.0.0.1:8443/hooks');
    await assert.rejects(validateEndpointUrl('https://127.0.0.1:8444/hooks', policy), /refused/);
    // Trust lifts the address rule, not the scheme: production still sends only over https.
    await assert.rejects(validateEndpointUrl('http://127.0.0.1:8443/hooks', policy), /https/);
    assert.throws(() => loadConfig({ ...production, WEBHOOKS_TRUSTED_DESTINATIONS: '10.0.0.0/8' }), /host:port/);
  });
});
