import { randomUUID } from 'node:crypto';
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ZEvent, ZEventList } from '../../src/domain/event-log/event-log.schemas';
import type { AppCredential } from '../../src/domain/apps/apps';
import { writeEvents } from '../../src/domain/event-log/events';
import { verifyWebhook } from '../../src/webhooks/verify';
import { call, newApp } from '../support/api-client';
import { getHarness } from '../support/harness';
import { newAccountWithEvent, delivered, dispatch, webhookTestbed } from '../webhooks/support/flow';

/** A page of the event log, read as a partner reads it: 200 and the documented shape, or the test fails. */
async function events(cred: AppCredential, query: string) {
  const res = await call(`/v2/events${query}`, { credential: cred });
  assert.equal(res.status, 200, res.text);
  return ZEventList.parse(res.body);
}

describe('Event log: GET /v2/events', () => {
  let app: AppCredential;
  const accounts: Array<{ accountId: string; eventId: string }> = [];

  before(async () => {
    app = await newApp();
    for (let i = 0; i < 3; i += 1) accounts.push(await newAccountWithEvent(app));
  });

  test("lists the app's events newest first, paged with a cursor bound to its filters", async () => {
    const first = await events(app, '?limit=2');
    assert.equal(first.data.length, 2);
    assert.ok(first.nextCursor);
    const second = await events(app, `?limit=2&cursor=${first.nextCursor}`);
    assert.equal(second.data.length, 1);
    assert.equal(second.nextCursor, undefined);
    const listed = [...first.data, ...second.data];
    assert.deepEqual(
      listed.map((e) => e.id),
      accounts.map((a) => a.eventId).reverse(),
    );
    const times = listed.map((e) => Date.parse(e.createdAt));
    assert.deepEqual(
      [...times].sort((a, b) => b - a),
      times,
    );
    const moved = await call(`/v2/events?name=account.updated&cursor=${first.nextCursor}`, { credential: app });
    assert.equal(moved.status, 400, moved.text);
    assert.equal(moved.body.error.code, 'bad_request');
  });

  test('filters by name, resource id and creation time', async () => {
    const target = accounts[1]!;
    const byResource = await events(app, `?resourceId=${target.accountId}`);
    assert.deepEqual(
      byResource.data.map((e) => [e.id, e.name, e.resourceType, e.resourceId, e.accountId]),
      [[target.eventId, 'account.created', 'account', target.accountId, target.accountId]],
    );
    assert.equal((await events(app, '?name=account.created')).data.length, 3);
    assert.deepEqual((await events(app, '?name=payment.succeeded')).data, []);
    const created = byResource.data[0]!.createdAt;
    assert.deepEqual(
      (await events(app, `?resourceId=${target.accountId}&createdFrom=${created}`)).data.map((e) => e.id),
      [target.eventId],
    );
    assert.deepEqual((await events(app, `?resourceId=${target.accountId}&createdTo=${created}`)).data, []);
    assert.deepEqual((await events(app, '?createdFrom=2099-01-01T00:00:00Z')).data, []);
  });

  test('reads one event; another app gets 404, a credential without the scope 403 and a list without it', async () => {
    const target = accounts[0]!;
    const res = await call(`/v2/events/${target.eventId}`, { credential: app });
    assert.equal(res.status, 200, res.text);
    const event = ZEvent.parse(res.body);
    assert.deepEqual(event.payload, { accountId: target.accountId, externalUserId: event.payload.externalUserId });
    assert.deepEqual(event, (await events(app, `?resourceId=${target.accountId}`)).data[0]);

    const other = await newApp();
    const foreign = await call(`/v2/events/${target.eventId}`, { credential: other });
    assert.equal(foreign.status, 404, foreign.text);
    assert.deepEqual((await events(other, '')).data, []);

    const narrow = await newApp({ scopes: ['v2:payments'] });
    const own = await accountEventOf(narrow);
    const refused = await call(`/v2/events/${own}`, { credential: narrow });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error.details.requiredScope, 'v2:accounts');
    assert.deepEqual((await events(narrow, '')).data, [], 'account events are not listed without v2:accounts');
  });

  test('refuses bad input with the error envelope', async () => {
    const cases = [
      ['/v2/events?name=payment.exploded', 'query.name'],
      ['/v2/events?resourceId=acct_%00x', 'query.resourceId'],
      ['/v2/events?limit=0', 'query.limit'],
      ['/v2/events?limit=101', 'query.limit'],
      ['/v2/events?createdFrom=yesterday', 'query.createdFrom'],
      ['/v2/events?colour=red', 'query'],
      ['/v2/events/not-an-event', 'path.eventId'],
    ] as const;
    for (const [path, field] of cases) {
      const res = await call(path, { credential: app });
      assert.equal(res.status, 400, `${path}: ${res.text}`);
      assert.equal(res.body.error.code, 'bad_request', path);
      const fields = (res.body.error.details?.fields ?? []).map((f: { field: string }) => f.field);
      assert.ok(
        fields.some((f: string) => f.startsWith(field)),
        `${path}: ${JSON.stringify(fields)}`,
      );
    }
    const missing = await call('/v2/events/evt_000000000000000000000000', { credential: app });
    assert.equal(missing.status, 404, missing.text);
  });
});

/** An account.updated event of the app, written as the service writes events (its credential may lack v2:accounts). */
async function accountEventOf(cred: AppCredential): Promise<string> {
  const h = await getHarness();
  const subject = {
    appId: cred.appId,
    apiVersion: h.environments.apiVersion,
    accountId: null,
    resourceType: 'account' as const,
    resourceId: 'acct_elsewhere',
  };
  const [id] = await h.db.prisma.$transaction((tx) =>
    writeEvents(tx, subject, `test:${randomUUID()}`, [{ name: 'account.updated', payload: {} }]),
  );
  return id!;
}

describe('Event log: the same event a webhook delivered', () => {
  const bed = webhookTestbed();

  test('GET /v2/events/{eventId} answers the delivered envelope, field for field', async () => {
    const app = await newApp();
    const hook = bed.receiver().hook();
    const created = await bed.admin().call('POST', `/admin/v1/apps/${app.appId}/webhook-endpoints`, { url: hook.url });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const { accountId, eventId } = await newAccountWithEvent(app);
    await dispatch();
    assert.equal((await delivered(eventId, created.body.endpoint.id)).status, 'succeeded');
    const [request] = bed.receiver().requests(hook.path);
    assert.ok(request, 'the receiver got the delivery');
    const envelope = verifyWebhook(request.rawBody, request.headers, created.body.signingSecret);

    const res = await call(`/v2/events/${eventId}`, { credential: app });
    assert.equal(res.status, 200, res.text);
    const { resourceType, resourceId, accountId: eventAccount, ...fields } = ZEvent.parse(res.body);
    assert.deepEqual(fields, envelope);
    assert.deepEqual([resourceType, resourceId, eventAccount], ['account', accountId, accountId]);
  });
});
