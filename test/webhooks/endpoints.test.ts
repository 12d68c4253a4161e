import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newApp } from '../support/api-client';
import { getHarness, TEST_SERVICE_SECRET } from '../support/harness';
import { decryptSigningSecret } from '../../src/domain/webhooks/signing-secrets';
import { EVENT_NAMES } from '../../src/domain/event-log/event-catalog';
import { startAdminApi, type AdminApi } from './support/admin';
import { createTestOperator } from '../support/operators';

const ENDPOINT_KEYS = [
  'allEvents',
  'appId',
  'archivedAt',
  'createdAt',
  'description',
  'events',
  'id',
  'secretRotatedAt',
  'secretVersion',
  'status',
  'updatedAt',
  'url',
];

describe('Webhook endpoints (admin API)', () => {
  let admin: AdminApi; // private destinations allowed (development mode)
  let strict: AdminApi; // the spec's default: public https destinations only
  before(async () => {
    admin = await startAdminApi({ allowPrivate: true });
    strict = await startAdminApi({ allowPrivate: false });
  });
  after(async () => {
    await admin.close();
    await strict.close();
  });

  const base = (appId: string) => `/admin/v1/apps/${appId}/webhook-endpoints`;

  test("the admin API is not on the partner port, and refuses a missing or wrong operator token and a viewer's change", async () => {
    const h = await getHarness();
    const app = await newApp();
    const absent = await fetch(`${h.baseUrl}${base(app.appId)}`, {
      headers: { authorization: 'Bearer whatever-token-0123456789abcdef0123' },
    });
    assert.equal(absent.status, 404);
    assert.equal(((await absent.json()) as { error: { code: string } }).error.code, 'not_found');

    const missing = await admin.call('GET', base(app.appId), undefined, null);
    assert.equal(missing.status, 401);
    assert.equal(missing.body.error.code, 'unauthorized');
    assert.match(missing.headers.get('www-authenticate') ?? '', /^Bearer /);
    const wrong = await admin.call('GET', base(app.appId), undefined, 'not-the-admin-token-0123456789abcdef01');
    assert.equal(wrong.status, 401);
    // A partner credential is not an admin credential.
    const basic = await fetch(`${admin.adminBaseUrl}${base(app.appId)}`, {
      headers: { authorization: `Basic ${Buffer.from(`${app.appId}:${app.appSecret}`).toString('base64')}` },
    });
    assert.equal(basic.status, 401);
    // A viewer reads endpoints but changes none; the refusal is audited as theirs.
    const viewer = await createTestOperator('viewer');
    assert.equal((await admin.call('GET', base(app.appId), undefined, viewer.token)).status, 200);
    const change = await admin.call('POST', base(app.appId), { url: 'https://93.184.216.34/hooks/viewer' }, viewer.token);
    assert.equal(change.status, 403, JSON.stringify(change.body));
    assert.equal(await h.db.prisma.webhookEndpoint.count({ where: { appId: app.appId } }), 0);
    // A path holding NUL is refused in the envelope, and the refusal is audited (the NUL escaped).
    const nul = await admin.call('PATCH', `/admin/v1/apps/app_nul%00x/webhook-endpoints/whe_nothing`, { description: 'x' });
    assert.equal(nul.status, 400, JSON.stringify(nul.body));
    const audited = await h.db.prisma.operatorAction.findFirstOrThrow({ where: { targetId: 'app_nul\\0x' } });
    assert.deepEqual([audited.action, audited.outcome], ['update-webhook-endpoint', 'refused']);
  });

  test('creates an endpoint, shows the signing secret once, and stores it only encrypted', async () => {
    const h = await getHarness();
    const app = await newApp();
    const created = await strict.call('POST', base(app.appId), {
      url: 'https://93.184.216.34/hooks/payments',
      description: 'Payments backend',
      events: ['account.created', 'account.updated', 'account.created'],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.headers.get('cache-control'), 'no-store');
    assert.deepEqual(Object.keys(created.body).sort(), ['endpoint', 'signingSecret']);
    const { endpoint, signingSecret } = created.body;
    assert.match(signingSecret, /^whsec_[A-Za-z0-9]{43}$/);
    assert.deepEqual(Object.keys(endpoint).sort(), ENDPOINT_KEYS);
    assert.match(endpoint.id, /^whe_/);
    assert.equal(endpoint.appId, app.appId);
    assert.equal(endpoint.url, 'https://93.184.216.34/hooks/payments');
    assert.equal(endpoint.description, 'Payments backend');
    assert.deepEqual(endpoint.events, ['account.created', 'account.updated']);
    assert.equal(endpoint.allEvents, false);
    assert.equal(endpoint.status, 'enabled');
    assert.equal(endpoint.secretVersion, 1);

    const read = await strict.call('GET', `${base(app.appId)}/${endpoint.id}`);
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, endpoint);
    const list = await strict.call('GET', base(app.appId));
    assert.deepEqual(list.body, { items: [endpoint] });

    const row = await h.db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    assert.ok(!JSON.stringify(row).includes(signingSecret), 'the secret is not stored in plain text');
    // The operator's change is in the one audit, as theirs.
    const audit = await h.db.prisma.operatorAction.findMany({ where: { targetType: 'app', targetId: app.appId } });
    assert.deepEqual(
      audit.map((a) => [a.actor, a.channel, a.action, a.outcome]),
      [[strict.operator.email, 'admin_api', 'create-webhook-endpoint', 'applied']],
    );
    // v2.<key id>.<iv>.<tag>.<ciphertext> (src/domain/keys/sealed-text.ts)
    assert.match(row.secretCiphertext, /^v2\.[0-9a-f]+\.[\w-]+\.[\w-]+\.[\w-]+$/);
    assert.equal(decryptSigningSecret(TEST_SERVICE_SECRET, endpoint.id, row.secretCiphertext), signingSecret);
    // The ciphertext is bound to its endpoint and to the service secret.
    assert.throws(() => decryptSigningSecret(TEST_SERVICE_SECRET, 'whe_other', row.secretCiphertext));
    assert.throws(() => decryptSigningSecret('another-service-secret-0123456789abcdef', endpoint.id, row.secretCiphertext));
  });

  test('no events chosen means every event', async () => {
    const app = await newApp();
    const created = await strict.call('POST', base(app.appId), { url: 'https://93.184.216.34/all' });
    assert.equal(created.status, 201);
    assert.deepEqual(created.body.endpoint.events, []);
    assert.equal(created.body.endpoint.allEvents, true);
    assert.equal(created.body.endpoint.description, null);
  });

  test('enforces the URL, description and events rules', async () => {
    const app = await newApp();
    const create = (body: unknown) => strict.call('POST', base(app.appId), body);
    const fieldOf = (res: { body: any }) => res.body.error.details.fields[0].field;

    const http = await create({ url: 'http://93.184.216.34/hook' });
    assert.equal(http.status, 400);
    assert.equal(fieldOf(http), 'body.url');
    assert.match(http.body.error.message, /https/);
    const creds = await create({ url: 'https://user:pass@93.184.216.34/hook' });
    assert.equal(creds.status, 400);
    assert.match(creds.body.error.message, /credentials/);
    const relative = await create({ url: '/hook' });
    assert.equal(relative.status, 400);
    const long = await create({ url: `https://93.184.216.34/${'a'.repeat(2030)}` });
    assert.equal(long.status, 400);
    assert.equal(fieldOf(long), 'body.url');
    assert.equal((await create({ url: `https://93.184.216.34/${'a'.repeat(2000)}` })).status, 201);

    const description = await create({ url: 'https://93.184.216.34/d', description: 'x'.repeat(513) });
    assert.equal(description.status, 400);
    assert.equal(fieldOf(description), 'body.description');
    assert.equal((await create({ url: 'https://93.184.216.34/d', description: 'x'.repeat(512) })).status, 201);

    const unknown = await create({ url: 'https://93.184.216.34/e', events: ['account.created', 'account.deleted'] });
    assert.equal(unknown.status, 400);
    assert.equal(fieldOf(unknown), 'body.events.1');
    const tooMany = await create({
      url: 'https://93.184.216.34/e',
      events: Array.from({ length: 101 }, (_, i) => EVENT_NAMES[i % EVENT_NAMES.length]),
    });
    assert.equal(tooMany.status, 400);
    assert.equal(fieldOf(tooMany), 'body.events');
    const extra = await create({ url: 'https://93.184.216.34/e', secret: 'mine' });
    assert.equal(extra.status, 400);
  });

  test("a URL is unique among the app's active endpoints; archiving frees it; another app may use it", async () => {
    const app = await newApp();
    const url = 'https://93.184.216.34/unique';
    const first = await strict.call('POST', base(app.appId), { url });
    assert.equal(first.status, 201);
    const again = await strict.call('POST', base(app.appId), { url });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'conflict');
    assert.equal(again.body.error.details.endpointId, first.body.endpoint.id);
    // The same URL spelled differently is the same URL.
    assert.equal((await strict.call('POST', base(app.appId), { url: 'HTTPS://93.184.216.34:443/unique' })).status, 409);
    const disabled = await strict.call('POST', `${base(app.appId)}/${first.body.endpoint.id}/disable`);
    assert.equal(disabled.status, 200);
    assert.equal((await strict.call('POST', base(app.appId), { url })).status, 409, 'a disabled endpoint is still active');

    const other = await newApp();
    assert.equal((await strict.call('POST', base(other.appId), { url })).status, 201);

    assert.equal((await strict.call('POST', `${base(app.appId)}/${first.body.endpoint.id}/archive`)).status, 200);
    const reused = await strict.call('POST', base(app.appId), { url });
    assert.equal(reused.status, 201);
    assert.notEqual(reused.body.endpoint.id, first.body.endpoint.id);
  });

  test('refuses destinations on local or private networks, including a hostname that resolves to 127.0.0.1', async () => {
    const app = await newApp();
    const cases: Array<[string, string]> = [
      ['https://localhost:8443/hook', 'loopback'],
      ['https://127.0.0.1/hook', 'loopback'],
      ['https://[::1]/hook', 'loopback'],
      ['https://[::ffff:127.0.0.1]/hook', 'loopback'],
      ['https://10.1.2.3/hook', 'private'],
      ['https://192.168.0.10/hook', 'private'],
      ['https://169.254.169.254/latest/meta-data', 'link_local'],
      ['https://100.64.0.1/hook', 'carrier_grade_nat'],
      ['https://[fd00::1]/hook', 'unique_local'],
      ['https://0.0.0.0/hook', 'unspecified'],
      ['https://224.0.0.1/hook', 'multicast'],
    ];
    for (const [url, reason] of cases) {
      const res = await strict.call('POST', base(app.appId), { url });
      assert.equal(res.status, 422, url);
      assert.equal(res.body.error.code, 'webhook_destination_not_allowed', url);
      assert.equal(res.body.error.details.reason, reason, url);
    }
    const localhost = await strict.call('POST', base(app.appId), { url: 'https://localhost:8443/hook' });
    assert.ok(['127.0.0.1', '::1'].includes(localhost.body.error.details.address), JSON.stringify(localhost.body));
    const h = await getHarness();
    assert.equal(await h.db.prisma.webhookEndpoint.count({ where: { appId: app.appId } }), 0, 'a refused request creates nothing');

    // With WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS (development), local http receivers are accepted.
    const dev = await admin.call('POST', base(app.appId), { url: 'http://localhost:4000/hook' });
    assert.equal(dev.status, 201);
  });

  test('edits description and events; the URL is immutable', async () => {
    const app = await newApp();
    const { body } = await strict.call('POST', base(app.appId), { url: 'https://93.184.216.34/edit', description: 'before' });
    const path = `${base(app.appId)}/${body.endpoint.id}`;
    const url = await strict.call('PATCH', path, { url: 'https://93.184.216.34/other' });
    assert.equal(url.status, 400);
    assert.equal(url.body.error.details.fields[0].field, 'body.url');
    assert.match(url.body.error.message, /immutable/);
    assert.equal((await strict.call('PATCH', path, {})).status, 400);

    const edited = await strict.call('PATCH', path, { description: 'after', events: ['account.updated'] });
    assert.equal(edited.status, 200);
    assert.equal(edited.body.url, 'https://93.184.216.34/edit');
    assert.equal(edited.body.description, 'after');
    assert.deepEqual(edited.body.events, ['account.updated']);
    const cleared = await strict.call('PATCH', path, { description: null, events: [] });
    assert.equal(cleared.body.description, null);
    assert.equal(cleared.body.allEvents, true);
  });

  test('disables and enables; an archived endpoint cannot be changed, reactivated, rotated or archived again', async () => {
    const h = await getHarness();
    const app = await newApp();
    const { body } = await strict.call('POST', base(app.appId), { url: 'https://93.184.216.34/lifecycle' });
    const path = `${base(app.appId)}/${body.endpoint.id}`;
    assert.equal((await strict.call('POST', `${path}/disable`)).body.status, 'disabled');
    assert.equal((await strict.call('POST', `${path}/enable`)).body.status, 'enabled');
    const archived = await strict.call('POST', `${path}/archive`);
    assert.equal(archived.status, 200);
    assert.equal(archived.body.status, 'archived');
    assert.ok(archived.body.archivedAt);
    const before = await h.db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: body.endpoint.id } });

    for (const [method, suffix, payload] of [
      ['PATCH', '', { description: 'nope' }],
      ['POST', '/enable', undefined],
      ['POST', '/disable', undefined],
      ['POST', '/rotate-secret', undefined],
      ['POST', '/archive', undefined],
    ] as const) {
      const res = await strict.call(method, `${path}${suffix}`, payload);
      assert.equal(res.status, 409, `${method} ${suffix}`);
      assert.equal(res.body.error.code, 'webhook_endpoint_archived');
    }
    const after = await h.db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: body.endpoint.id } });
    assert.deepEqual(after, before);
  });

  test('rotation shows a new secret once and replaces the stored one at once', async () => {
    const h = await getHarness();
    const app = await newApp();
    const { body } = await strict.call('POST', base(app.appId), { url: 'https://93.184.216.34/rotate' });
    const rotated = await strict.call('POST', `${base(app.appId)}/${body.endpoint.id}/rotate-secret`);
    assert.equal(rotated.status, 200);
    assert.equal(rotated.headers.get('cache-control'), 'no-store');
    assert.match(rotated.body.signingSecret, /^whsec_/);
    assert.notEqual(rotated.body.signingSecret, body.signingSecret);
    assert.equal(rotated.body.endpoint.secretVersion, 2);
    assert.ok(rotated.body.endpoint.secretRotatedAt);
    const row = await h.db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: body.endpoint.id } });
    assert.equal(decryptSigningSecret(TEST_SERVICE_SECRET, row.id, row.secretCiphertext), rotated.body.signingSecret);
  });

  test('an endpoint is only reachable under its own app', async () => {
    const app = await newApp();
    const other = await newApp();
    const { body } = await strict.call('POST', base(app.appId), { url: 'https://93.184.216.34/tenant' });
    const res = await strict.call('GET', `${base(other.appId)}/${body.endpoint.id}`);
    assert.equal(res.status, 404);
    assert.equal((await strict.call('POST', `${base(other.appId)}/${body.endpoint.id}/archive`)).status, 404);
    assert.equal((await strict.call('GET', base('app_doesNotExist'))).status, 404);
  });
});
