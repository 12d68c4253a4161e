import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config';

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
});
