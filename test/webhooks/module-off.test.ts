import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { deliveringApps } from '../../src/domain/webhooks/dispatch';
import { deliveringEnvironments } from '../../src/domain/webhooks/webhooks-module';
import { call, newApp } from '../support/api-client';
import { sandboxWithout } from '../support/environments';
import { getHarness } from '../support/harness';
import { startAdminApi, type AdminApi } from './support/admin';

/** Where the environment has no webhooks module, nothing is delivered and no endpoint is managed: what integrations.webhooks says. */
describe('The webhooks module off for an environment', () => {
  let on: AdminApi;
  let off: AdminApi;
  before(async () => {
    const h = await getHarness();
    on = await startAdminApi({ allowPrivate: true });
    off = await startAdminApi({ allowPrivate: true, environments: sandboxWithout(h.environments, 'webhooks') });
  });
  after(async () => {
    await on.close();
    await off.close();
  });

  test('the config says off, endpoint changes answer 424 naming the module, and reads still answer', async () => {
    const app = await newApp();
    const created = await on.call('POST', `/admin/v1/apps/${app.appId}/webhook-endpoints`, { url: 'http://127.0.0.1:9/hook' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const endpointId = created.body.endpoint.id as string;

    const config = await call('/v2/partners/config', { credential: app, baseUrl: off.baseUrl });
    assert.deepEqual(config.body.integrations.webhooks, { enabled: false, availableToCredential: false });
    for (const [method, path, body] of [
      ['POST', `/admin/v1/apps/${app.appId}/webhook-endpoints`, { url: 'http://127.0.0.1:9/other' }],
      ['PATCH', `/admin/v1/apps/${app.appId}/webhook-endpoints/${endpointId}`, { description: 'renamed' }],
      ['POST', `/admin/v1/apps/${app.appId}/webhook-endpoints/${endpointId}/disable`, {}],
      ['POST', `/admin/v1/apps/${app.appId}/webhook-endpoints/${endpointId}/rotate-secret`, {}],
    ] as const) {
      const res = await off.call(method, path, body);
      assert.equal(res.status, 424, `${method} ${path}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'chain_config_missing');
      assert.equal(res.body.error.details.module, 'webhooks');
    }
    const list = await off.call('GET', `/admin/v1/apps/${app.appId}/webhook-endpoints`);
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.items.map((e: { id: string; status: string; description: string | null }) => [e.id, e.status]),
      [[endpointId, 'enabled']],
      'nothing changed',
    );
  });

  test('the dispatch pass delivers only to apps of the environments that run the module', async () => {
    const h = await getHarness();
    const sandboxApp = await newApp();
    const productionApp = await newApp({ environment: 'production' });
    const ids = [sandboxApp.appId, productionApp.appId];
    assert.equal(deliveringEnvironments(h.environments), undefined, 'every environment delivers: no filter');
    const offIn = deliveringEnvironments(sandboxWithout(h.environments, 'webhooks'));
    assert.deepEqual(offIn, ['production']);
    assert.deepEqual(await deliveringApps(h.db.prisma, ids, offIn), [productionApp.appId]);
    assert.deepEqual((await deliveringApps(h.db.prisma, ids, ['production', 'sandbox'])).sort(), [...ids].sort());
  });
});
