import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newApp } from '../support/api-client';
import { getHarness, TEST_SERVICE_SECRET } from '../support/harness';
import { cli as runCliJson } from '../support/cli';
import { createWebhookEndpoint } from '../../src/domain/webhooks/endpoints';
import { decryptSigningSecret } from '../../src/domain/webhooks/signing-secrets';
import { verifyWebhook } from '../../src/webhooks/verify';
import { newAccountWithEvent, delivered, dispatch, ensureTestDispatcher } from './support/flow';
import { startReceiver } from './support/receiver';

/** Runs the operator CLI against the test database; returns the one JSON object it prints. */
const cli = (args: string[], env: Record<string, string> = {}) =>
  runCliJson(['webhooks', ...args], { WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS: 'true', ...env });

describe('Webhooks CLI', () => {
  // Each call is a real process (about 2 s of start-up), so these tests keep the number of calls small;
  // every rule behind the commands is covered through the admin API, which shares the service module.
  test('create, list, update, rotate-secret and archive each print one JSON object; an archived endpoint is refused', async () => {
    const h = await getHarness();
    const app = await newApp();
    const created = await cli([
      'create',
      '--app',
      app.appId,
      '--url',
      'http://127.0.0.1:9/cli-hook',
      '--description',
      'from the CLI',
      '--events',
      'account.created,account.updated',
    ]);
    assert.deepEqual(Object.keys(created).sort(), ['endpoint', 'signingSecret']);
    const id: string = created.endpoint.id;
    assert.equal(created.endpoint.description, 'from the CLI');
    assert.deepEqual(created.endpoint.events, ['account.created', 'account.updated']);
    const row = await h.db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id } });
    assert.equal(decryptSigningSecret(TEST_SERVICE_SECRET, id, row.secretCiphertext), created.signingSecret);

    assert.deepEqual(await cli(['list', '--app', app.appId]), { items: [created.endpoint] });
    const updated = await cli(['update', id, '--description', 'renamed', '--all-events']);
    assert.equal(updated.description, 'renamed');
    assert.equal(updated.allEvents, true);
    const rotated = await cli(['rotate-secret', id]);
    assert.notEqual(rotated.signingSecret, created.signingSecret);
    assert.equal(rotated.endpoint.secretVersion, 2);
    assert.equal((await cli(['archive', id])).status, 'archived');
    await assert.rejects(cli(['enable', id]), (err: { code?: number; stdout?: string; stderr?: string }) => {
      assert.equal(err.code, 1);
      assert.equal(err.stdout, '');
      assert.match(err.stderr ?? '', /archived/);
      return true;
    });
  });

  test('refuses a private destination unless WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS is on, and a URL change', async () => {
    const h = await getHarness();
    const app = await newApp();
    const { endpoint } = await createWebhookEndpoint(
      { prisma: h.db.prisma, serviceSecret: TEST_SERVICE_SECRET, destinations: { allowPrivateDestinations: true } },
      app.appId,
      { url: 'https://localhost/hook' },
    );
    const [refused, immutable] = await Promise.allSettled([
      cli(['create', '--app', app.appId, '--url', 'https://localhost/other'], { WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS: 'false' }),
      cli(['update', endpoint.id, '--url', 'https://localhost/other']),
    ]);
    assert.equal(refused.status, 'rejected');
    assert.equal((refused as PromiseRejectedResult).reason.code, 1);
    assert.match((refused as PromiseRejectedResult).reason.stderr, /loopback address/);
    assert.equal(immutable.status, 'rejected');
    assert.match((immutable as PromiseRejectedResult).reason.stderr, /immutable/);
    assert.equal(await h.db.prisma.webhookEndpoint.count({ where: { appId: app.appId } }), 1);
  });

  test('deliveries and attempts show an abandoned delivery; redeliver sends it again under the same delivery id', async () => {
    await ensureTestDispatcher();
    const receiver = await startReceiver();
    try {
      const app = await newApp();
      const hook = receiver.hook([{ status: 400, body: 'no thanks' }]);
      const { endpoint, signingSecret } = await createWebhookEndpoint(
        { prisma: (await getHarness()).db.prisma, serviceSecret: TEST_SERVICE_SECRET, destinations: { allowPrivateDestinations: true } },
        app.appId,
        { url: hook.url },
      );
      const { eventId } = await newAccountWithEvent(app);
      await dispatch();
      assert.equal((await delivered(eventId, endpoint.id)).status, 'abandoned');

      const list = await cli(['deliveries', '--app', app.appId, '--endpoint', endpoint.id]);
      assert.equal(list.items.length, 1);
      assert.equal(list.nextCursor, null);
      const delivery = list.items[0];
      assert.equal(delivery.eventId, eventId);
      assert.equal(delivery.eventName, 'account.created');
      assert.equal(delivery.status, 'abandoned');
      assert.equal(delivery.lastStatusCode, 400);
      const { attempts } = await cli(['attempts', delivery.id]);
      assert.equal(attempts.length, 1);
      assert.equal(attempts[0].responseStatus, 400);
      assert.equal(attempts[0].responseBody, 'no thanks');
      assert.equal(attempts[0].outcome, 'abandoned');
      assert.equal(typeof attempts[0].latencyMs, 'number');

      const redelivered = await cli(['redeliver', delivery.id]);
      assert.equal(redelivered.delivery.id, delivery.id);
      assert.equal(redelivered.delivery.round, 2);
      await dispatch();
      assert.equal((await delivered(eventId, endpoint.id, 2)).status, 'succeeded');
      const requests = receiver.requests(hook.path);
      assert.deepEqual(
        requests.map((r) => r.headers['x-svc-delivery']),
        [delivery.id, delivery.id],
      );
      assert.equal(verifyWebhook(requests[1]!.rawBody, requests[1]!.headers, signingSecret).id, eventId);
      // Everything since the start was received: a recovery finds nothing to send.
      const since = new Date(Date.now() - 3_600_000).toISOString();
      const recovered = await cli(['recover', endpoint.id, '--since', since]);
      assert.deepEqual(recovered.recovery, { endpointId: endpoint.id, since, redelivered: 0, newDeliveries: 0 });
    } finally {
      await receiver.close();
    }
  });
});
