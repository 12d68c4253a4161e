import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AppCredential } from '../../src/domain/apps/apps';
import { verifyWebhook } from '../../src/webhooks/verify';
import { newApp } from '../support/api-client';
import { getHarness } from '../support/harness';
import type { AdminApi } from './support/admin';
import { newAccountWithEvent, delivered, dispatch, webhookTestbed } from './support/flow';
import type { Receiver } from './support/receiver';

// A refusal abandons the delivery at its first attempt (no backoff timers for the test to skip).
const REFUSED = { status: 400 };

describe('Recovering a webhook endpoint', () => {
  const bed = webhookTestbed();
  let admin: AdminApi;
  let receiver: Receiver;
  before(() => {
    admin = bed.admin();
    receiver = bed.receiver();
  });

  async function endpoint(app: AppCredential, script: Array<{ status: number }>) {
    const hook = receiver.hook(script);
    const res = await admin.call('POST', `/admin/v1/apps/${app.appId}/webhook-endpoints`, { url: hook.url });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return { id: res.body.endpoint.id as string, secret: res.body.signingSecret as string, path: hook.path };
  }

  const recover = (app: AppCredential, endpointId: string, body: unknown) =>
    admin.call('POST', `/admin/v1/apps/${app.appId}/webhook-endpoints/${endpointId}/recover`, body);

  test('re-delivers what the endpoint missed since a time (abandoned, and sent while disabled), not what it received', async () => {
    const h = await getHarness();
    const app = await newApp();
    const since = new Date(Date.now() - 1000).toISOString();
    // The first event's delivery is abandoned; the receiver takes everything after.
    const ep = await endpoint(app, [REFUSED]);
    const lost = await newAccountWithEvent(app);
    await dispatch();
    assert.equal((await delivered(lost.eventId, ep.id)).status, 'abandoned');
    const received = await newAccountWithEvent(app);
    await dispatch();
    assert.equal((await delivered(received.eventId, ep.id)).status, 'succeeded');
    assert.equal((await admin.call('POST', `/admin/v1/apps/${app.appId}/webhook-endpoints/${ep.id}/disable`)).status, 200);
    const whileDisabled = await newAccountWithEvent(app);
    await dispatch();
    assert.equal(
      await h.db.prisma.webhookDelivery.count({ where: { eventId: whileDisabled.eventId } }),
      0,
      'a disabled endpoint gets no delivery',
    );

    const refused = await recover(app, ep.id, { since });
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.equal((await admin.call('POST', `/admin/v1/apps/${app.appId}/webhook-endpoints/${ep.id}/enable`)).status, 200);
    const res = await recover(app, ep.id, { since });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.deepEqual(res.body, { recovery: { endpointId: ep.id, since, redelivered: 1, newDeliveries: 1 } });
    const again = await recover(app, ep.id, { since });
    assert.deepEqual(
      again.body.recovery,
      { endpointId: ep.id, since, redelivered: 0, newDeliveries: 0 },
      'queued deliveries are not queued twice',
    );

    await dispatch();
    assert.equal((await delivered(lost.eventId, ep.id, 2)).status, 'succeeded');
    assert.equal((await delivered(whileDisabled.eventId, ep.id)).status, 'succeeded');
    const byEvent = new Map<string, number>();
    for (const req of receiver.requests(ep.path)) {
      if (req.headers['x-svc-event'] === undefined) continue;
      const envelope = verifyWebhook(req.rawBody, req.headers, ep.secret);
      byEvent.set(envelope.id, (byEvent.get(envelope.id) ?? 0) + 1);
    }
    // The lost event: its refused attempt, then the recovered one; the received event once.
    assert.deepEqual(Object.fromEntries(byEvent), { [lost.eventId]: 2, [received.eventId]: 1, [whileDisabled.eventId]: 1 });
    const after = await recover(app, ep.id, { since });
    assert.deepEqual(after.body.recovery, { endpointId: ep.id, since, redelivered: 0, newDeliveries: 0 }, 'nothing left to recover');
  });

  test('refuses a time in the future or past the 90-day window, an archived or foreign endpoint, and a bad body', async () => {
    const app = await newApp();
    const ep = await endpoint(app, []);
    const cases: Array<[unknown, number, string]> = [
      [{ since: new Date(Date.now() + 60_000).toISOString() }, 400, 'bad_request'],
      [{ since: new Date(Date.now() - 91 * 86_400_000).toISOString() }, 400, 'bad_request'],
      [{ since: 'last tuesday' }, 400, 'bad_request'],
      [{}, 400, 'bad_request'],
      [{ since: new Date().toISOString(), extra: 1 }, 400, 'bad_request'],
    ];
    for (const [body, status, code] of cases) {
      const res = await recover(app, ep.id, body);
      assert.equal(res.status, status, JSON.stringify({ body, answer: res.body }));
      assert.equal(res.body.error.code, code);
    }
    const other = await newApp();
    const foreign = await recover(other, ep.id, { since: new Date().toISOString() });
    assert.equal(foreign.status, 404, JSON.stringify(foreign.body));
    assert.equal((await admin.call('POST', `/admin/v1/apps/${app.appId}/webhook-endpoints/${ep.id}/archive`)).status, 200);
    const archived = await recover(app, ep.id, { since: new Date().toISOString() });
    assert.equal(archived.status, 409, JSON.stringify(archived.body));
    assert.equal(archived.body.error.code, 'webhook_endpoint_archived');
  });
});
