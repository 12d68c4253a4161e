import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from '@temporalio/worker';
import { call, newApp } from '../support/api-client';
import { getHarness, TEST_SERVICE_SECRET } from '../support/harness';
import type { AppCredential } from '../../src/domain/apps/apps';
import { randomUUID } from 'node:crypto';
import type { Prisma } from '../../src/db/client';
import { writeEvents } from '../../src/domain/event-log/events';
import { attemptDelivery } from '../../src/domain/webhooks/attempt';
import { webhookDeliveryWorkflowId, WEBHOOK_DISPATCHER_WORKFLOW_ID } from '../../workflows/contracts/webhooks';
import { verifyWebhook, WebhookVerificationError } from '../../src/webhooks/verify';
import type { AdminApi } from './support/admin';
import { newAccountWithEvent, delivered, dispatch, webhookTestbed } from './support/flow';
import { startReceiver, type Receiver, type ScriptedResponse } from './support/receiver';

/** An account.updated event written as the service writes events (no account: no account headers). */
async function accountEvent(
  tx: Prisma.TransactionClient,
  appId: string,
  apiVersion: string,
  resourceId: string,
  payload: Record<string, unknown>,
): Promise<string> {
  const subject = { appId, apiVersion, accountId: null, resourceType: 'account' as const, resourceId };
  const [id] = await writeEvents(tx, subject, `test:${randomUUID()}`, [{ name: 'account.updated', payload }]);
  return id!;
}

interface Endpoint {
  id: string;
  secret: string;
  path: string;
}

describe('Webhook delivery', () => {
  const bed = webhookTestbed();
  let admin: AdminApi;
  let receiver: Receiver;
  before(() => {
    admin = bed.admin();
    receiver = bed.receiver();
  });

  async function endpoint(app: AppCredential, script: ScriptedResponse[] = [], body: Record<string, unknown> = {}): Promise<Endpoint> {
    const hook = receiver.hook(script);
    const res = await admin.call('POST', `/admin/v1/apps/${app.appId}/webhook-endpoints`, { url: hook.url, ...body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return { id: res.body.endpoint.id, secret: res.body.signingSecret, path: hook.path };
  }

  async function deliveryRow(eventId: string, endpointId: string) {
    const h = await getHarness();
    return h.db.prisma.webhookDelivery.findUniqueOrThrow({
      where: { eventId_endpointId: { eventId, endpointId } },
      include: { attempts: { orderBy: [{ round: 'asc' }, { attempt: 'asc' }] } },
    });
  }

  test('delivers account.created, signed so that verifyWebhook accepts the raw bytes, with the spec headers', async () => {
    const h = await getHarness();
    const app = await newApp();
    const ep = await endpoint(app);
    const { accountId, eventId } = await newAccountWithEvent(app, 'alice smith/ü');
    const summary = await dispatch();
    assert.ok(summary.deliveriesStarted >= 1);

    const result = await delivered(eventId, ep.id);
    const row = await deliveryRow(eventId, ep.id);
    assert.deepEqual(result, { deliveryId: row.id, round: 1, status: 'succeeded', attempts: 1 });
    assert.match(row.id, /^dlv_/);
    assert.equal(row.status, 'succeeded');
    assert.equal(row.attemptCount, 1);
    assert.equal(row.lastStatusCode, 200);
    assert.ok(row.completedAt);
    assert.equal(row.attempts.length, 1);
    assert.equal(row.attempts[0]?.responseStatus, 200);
    assert.equal(row.attempts[0]?.responseBody, 'ok');
    assert.equal(row.attempts[0]?.outcome, 'succeeded');
    assert.ok((row.attempts[0]?.latencyMs ?? -1) >= 0);

    const requests = receiver.requests(ep.path);
    assert.equal(requests.length, 1);
    const req = requests[0]!;
    assert.equal(req.headers['content-type'], 'application/json');
    assert.equal(req.headers['x-svc-event'], 'account.created');
    assert.equal(req.headers['x-svc-event-id'], eventId);
    assert.equal(req.headers['x-svc-delivery'], row.id);
    assert.equal(req.headers['x-svc-account-id'], accountId);
    assert.equal(req.headers['x-svc-external-user-id'], encodeURIComponent('alice smith/ü'));
    assert.match(String(req.headers['x-svc-timestamp']), /^\d{10}$/);
    assert.match(String(req.headers['x-svc-signature']), new RegExp(`^t=${req.headers['x-svc-timestamp']},v1=[0-9a-f]{64}$`));

    const envelope = verifyWebhook(req.rawBody, req.headers, ep.secret);
    const event = await h.db.prisma.event.findUniqueOrThrow({ where: { id: eventId } });
    assert.deepEqual(envelope, {
      id: eventId,
      name: 'account.created',
      apiVersion: h.environments.apiVersion,
      createdAt: event.createdAt.toISOString(),
      resourceSequence: 1,
      payload: { accountId, externalUserId: 'alice smith/ü' },
    });
    assert.deepEqual(Object.keys(JSON.parse(req.rawBody.toString('utf8'))), [
      'id',
      'name',
      'apiVersion',
      'createdAt',
      'resourceSequence',
      'payload',
    ]);
    assert.ok(event.dispatchedAt, 'the event row is marked dispatched');
  });

  test('503, 503, 200: delivered on the third attempt under one delivery id, backing off 30 s then 5 min', async () => {
    const app = await newApp();
    const ep = await endpoint(app, [{ status: 503 }, { status: 503 }, { status: 200 }]);
    const { eventId } = await newAccountWithEvent(app);
    await dispatch();
    // The contract's own schedule, 5 minutes included (the default bound covers it).
    const result = await delivered(eventId, ep.id);
    assert.equal(result.status, 'succeeded');
    assert.equal(result.attempts, 3);

    const requests = receiver.requests(ep.path);
    assert.equal(requests.length, 3);
    const row = await deliveryRow(eventId, ep.id);
    assert.deepEqual(
      requests.map((r) => r.headers['x-svc-delivery']),
      [row.id, row.id, row.id],
    );
    assert.deepEqual(
      requests.map((r) => r.headers['x-svc-event-id']),
      [eventId, eventId, eventId],
    );
    for (const r of requests) assert.equal(verifyWebhook(r.rawBody, r.headers, ep.secret).id, eventId);
    assert.equal(row.status, 'succeeded');
    assert.equal(row.attemptCount, 3);
    assert.deepEqual(
      row.attempts.map((a) => [a.attempt, a.responseStatus, a.outcome]),
      [
        [1, 503, 'retry'],
        [2, 503, 'retry'],
        [3, 200, 'succeeded'],
      ],
    );
    const [first, second] = row.attempts.map((a) => a.nextDelayMs);
    assert.ok(first !== null && first !== undefined && first >= 30_000 && first <= 33_000, `first delay ${first}`);
    assert.ok(second !== null && second !== undefined && second >= 300_000 && second <= 330_000, `second delay ${second}`);
  });

  test('as the service runs it, the first attempt is a local activity in the first workflow task; a retry after it is an activity', async () => {
    const h = await getHarness();
    h.policies.webhookDelivery = { firstAttemptLocal: true };
    try {
      const app = await newApp();
      const ep = await endpoint(app, [{ status: 503 }, { status: 200 }]);
      const { eventId } = await newAccountWithEvent(app);
      await dispatch();
      const result = await delivered(eventId, ep.id);
      assert.equal(result.status, 'succeeded');
      assert.equal(result.attempts, 2);
      const row = await deliveryRow(eventId, ep.id);
      assert.deepEqual(
        row.attempts.map((a) => [a.attempt, a.responseStatus, a.outcome]),
        [
          [1, 503, 'retry'],
          [2, 200, 'succeeded'],
        ],
      );
      // Each attempt was sent once (a re-run of the local attempt reuses its claimed record).
      const requests = receiver.requests(ep.path);
      assert.deepEqual(
        requests.map((r) => r.headers['x-svc-delivery']),
        [row.id, row.id],
      );
      const events = (await h.probes.workflowHistory(webhookDeliveryWorkflowId(eventId, ep.id, 1))).events ?? [];
      const localAttempts = events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
      const activityAttempts = events.filter(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'attemptWebhookDelivery',
      );
      assert.equal(localAttempts.length, 1);
      assert.equal(activityAttempts.length, 1);
    } finally {
      h.policies.webhookDelivery = { firstAttemptLocal: false };
    }
  });

  test('delivery and dispatcher histories replay deterministically against the current workflow code', async () => {
    const h = await getHarness();
    const app = await newApp();
    const ep = await endpoint(app, [{ status: 503, headers: { 'retry-after': '60' } }, { status: 200 }]);
    const { eventId } = await newAccountWithEvent(app);
    await dispatch();
    assert.equal((await delivered(eventId, ep.id)).status, 'succeeded');
    const deliveryId = webhookDeliveryWorkflowId(eventId, ep.id, 1);
    await Worker.runReplayHistory({ workflowBundle: h.workflowBundle }, await h.probes.workflowHistory(deliveryId), deliveryId);
    await Worker.runReplayHistory(
      { workflowBundle: h.workflowBundle },
      await h.probes.workflowHistory(WEBHOOK_DISPATCHER_WORKFLOW_ID),
      WEBHOOK_DISPATCHER_WORKFLOW_ID,
    );
  });

  test('400: abandoned after one attempt', async () => {
    const app = await newApp();
    const ep = await endpoint(app, [{ status: 400, body: 'bad payload' }]);
    const { eventId } = await newAccountWithEvent(app);
    await dispatch();
    const result = await delivered(eventId, ep.id);
    assert.equal(result.status, 'abandoned');
    assert.equal(result.attempts, 1);
    assert.equal(receiver.requests(ep.path).length, 1);
    const row = await deliveryRow(eventId, ep.id);
    assert.equal(row.status, 'abandoned');
    assert.equal(row.attemptCount, 1);
    assert.equal(row.lastStatusCode, 400);
    assert.equal(row.lastError, 'non_retryable_status: HTTP 400');
    assert.equal(row.attempts[0]?.responseBody, 'bad payload');
  });

  test('500 three times: abandoned after exactly 3 attempts', async () => {
    const h = await getHarness();
    const app = await newApp();
    const ep = await endpoint(app, [{ status: 500 }, { status: 500 }, { status: 500 }, { status: 200 }]);
    // Short waits (the schedule itself is the test above's): no 5-minute skip of the shared engine.
    h.webhookRetry.backoffMs = [500, 500];
    const { eventId } = await newAccountWithEvent(app);
    await dispatch();
    const result = await delivered(eventId, ep.id).finally(() => (h.webhookRetry.backoffMs = null));
    assert.equal(result.status, 'abandoned');
    assert.equal(result.attempts, 3);
    assert.equal(receiver.requests(ep.path).length, 3);
    const row = await deliveryRow(eventId, ep.id);
    assert.equal(row.status, 'abandoned');
    assert.equal(row.attemptCount, 3);
    assert.equal(row.lastError, 'max_attempts_reached: HTTP 500');
    assert.deepEqual(
      row.attempts.map((a) => a.outcome),
      ['retry', 'retry', 'abandoned'],
    );
  });

  test('a refused connection is retried like a 5xx and abandoned after 3 attempts', async () => {
    const app = await newApp();
    // Nothing listens on this port: every attempt is a connection error.
    const closed = await startReceiver();
    const url = closed.hook().url;
    await closed.close();
    const res = await admin.call('POST', `/admin/v1/apps/${app.appId}/webhook-endpoints`, { url });
    assert.equal(res.status, 201);
    const { eventId } = await newAccountWithEvent(app);
    await dispatch();
    const result = await delivered(eventId, res.body.endpoint.id);
    assert.deepEqual([result.status, result.attempts], ['abandoned', 3]);
    const row = await deliveryRow(eventId, res.body.endpoint.id);
    assert.deepEqual(
      row.attempts.map((a) => a.outcome),
      ['retry', 'retry', 'abandoned'],
    );
    assert.ok(
      row.attempts.every((a) => a.responseStatus === null && /ECONNREFUSED/.test(a.error ?? '')),
      JSON.stringify(row.attempts),
    );
  });

  test('a receiver that does not answer within the request timeout counts as a timeout and is retried', async () => {
    const h = await getHarness();
    const app = await newApp();
    const slow = receiver.hook([{ status: 200, before: () => new Promise((r) => setTimeout(r, 1_000)) }]);
    const created = await admin.call('POST', `/admin/v1/apps/${app.appId}/webhook-endpoints`, { url: slow.url });
    const endpointId: string = created.body.endpoint.id;
    const eventId = await h.db.prisma.$transaction((tx) => accountEvent(tx, app.appId, h.environments.apiVersion, 'acct_slow', {}));
    // Taken out of the dispatcher's way: this attempt runs here, with a 200 ms request budget.
    await h.db.prisma.event.update({ where: { id: eventId }, data: { dispatchedAt: new Date() } });
    const delivery = await h.db.prisma.webhookDelivery.create({
      data: { id: 'dlv_slowReceiver1', appId: app.appId, eventId, endpointId, status: 'pending' },
    });
    const report = await attemptDelivery(
      {
        prisma: h.db.prisma,
        logger: h.logger,
        serviceSecret: TEST_SERVICE_SECRET,
        destinations: { allowPrivateDestinations: true },
        http: { timeoutMs: 200, maxResponseBytes: 1024 },
      },
      { deliveryId: delivery.id, round: 1, attempt: 1, jitter: 0 },
    );
    assert.deepEqual(report, { step: { action: 'retry', delayMs: 30_000 }, responseStatus: null });
    const row = await deliveryRow(eventId, endpointId);
    assert.equal(row.status, 'retrying');
    assert.equal(row.attempts[0]?.error, 'no complete response within 200 ms');
    assert.equal(receiver.requests(slow.path).length, 1);
  });

  test('429 with Retry-After: 120 waits 120 s before the next attempt', async () => {
    const h = await getHarness();
    const app = await newApp();
    const ep = await endpoint(app, [{ status: 429, headers: { 'retry-after': '120' } }, { status: 200 }]);
    const { eventId } = await newAccountWithEvent(app);
    await dispatch();
    const result = await delivered(eventId, ep.id);
    assert.deepEqual([result.status, result.attempts], ['succeeded', 2]);
    const row = await deliveryRow(eventId, ep.id);
    assert.deepEqual(
      row.attempts.map((a) => [a.responseStatus, a.nextDelayMs]),
      [
        [429, 120_000],
        [200, null],
      ],
    );
    // The workflow really slept 120 s (not the 30 s backoff) between the attempts.
    const history = await h.probes.workflowHistory(webhookDeliveryWorkflowId(eventId, ep.id, 1));
    const timers = (history.events ?? [])
      .map((e) => e.timerStartedEventAttributes?.startToFireTimeout?.seconds)
      .filter((s) => s !== undefined && s !== null)
      .map(Number);
    assert.deepEqual(timers, [120]);
  });

  test('two endpoints: when one fails and the other succeeds, only the failing one is retried', async () => {
    const app = await newApp();
    const ok = await endpoint(app);
    const flaky = await endpoint(app, [{ status: 502 }, { status: 200 }]);
    const { eventId } = await newAccountWithEvent(app);
    await dispatch();
    const [okResult, flakyResult] = await Promise.all([delivered(eventId, ok.id), delivered(eventId, flaky.id)]);
    assert.deepEqual([okResult.status, okResult.attempts], ['succeeded', 1]);
    assert.deepEqual([flakyResult.status, flakyResult.attempts], ['succeeded', 2]);
    assert.equal(receiver.requests(ok.path).length, 1);
    assert.equal(receiver.requests(flaky.path).length, 2);
    const okDelivery = receiver.requests(ok.path)[0]?.headers['x-svc-delivery'];
    const flakyDeliveries = receiver.requests(flaky.path).map((r) => r.headers['x-svc-delivery']);
    assert.notEqual(okDelivery, flakyDeliveries[0]);
    assert.equal(flakyDeliveries[0], flakyDeliveries[1]);
    // Each endpoint verifies with its own secret only.
    assert.throws(() => verifyWebhook(receiver.requests(ok.path)[0]!.rawBody, receiver.requests(ok.path)[0]!.headers, flaky.secret));
  });

  test('a filtered subscription receives only its events; an unfiltered one receives all', async () => {
    const h = await getHarness();
    const app = await newApp();
    const updatesOnly = await endpoint(app, [], { events: ['account.updated'] });
    const everything = await endpoint(app);
    const { accountId, eventId: createdId } = await newAccountWithEvent(app);
    const profile = await call(`/v2/accounts/${accountId}/display-profile`, {
      method: 'PUT',
      credential: app,
      body: { displayName: 'Alice', expectedVersion: 0, reason: 'customer asked for it' },
    });
    assert.equal(profile.status, 200, profile.text);
    const updated = await h.db.prisma.event.findFirstOrThrow({
      where: { appId: app.appId, resourceId: accountId, name: 'account.updated' },
    });
    await dispatch();
    await Promise.all([delivered(updated.id, updatesOnly.id), delivered(createdId, everything.id), delivered(updated.id, everything.id)]);

    assert.deepEqual(
      receiver.requests(updatesOnly.path).map((r) => r.headers['x-svc-event']),
      ['account.updated'],
    );
    assert.deepEqual(
      receiver
        .requests(everything.path)
        .map((r) => r.headers['x-svc-event'])
        .sort(),
      ['account.created', 'account.updated'],
    );
    const deliveries = await h.db.prisma.webhookDelivery.findMany({ where: { endpointId: updatesOnly.id } });
    assert.deepEqual(
      deliveries.map((d) => d.eventId),
      [updated.id],
    );
  });

  test('a disabled endpoint receives nothing new; once enabled it receives later events', async () => {
    const h = await getHarness();
    const app = await newApp();
    const ep = await endpoint(app);
    const path = `/admin/v1/apps/${app.appId}/webhook-endpoints/${ep.id}`;
    assert.equal((await admin.call('POST', `${path}/disable`)).status, 200);
    await newAccountWithEvent(app);
    await dispatch();
    assert.equal(await h.db.prisma.webhookDelivery.count({ where: { endpointId: ep.id } }), 0);

    assert.equal((await admin.call('POST', `${path}/enable`)).status, 200);
    const { eventId } = await newAccountWithEvent(app);
    await dispatch();
    assert.equal((await delivered(eventId, ep.id)).status, 'succeeded');
    assert.equal(await h.db.prisma.webhookDelivery.count({ where: { endpointId: ep.id } }), 1);
    assert.deepEqual(
      receiver.requests(ep.path).map((r) => r.headers['x-svc-event-id']),
      [eventId],
    );
  });

  test('a delivery still retrying stops when its endpoint is disabled', async () => {
    const app = await newApp();
    const endpointPath = () => `/admin/v1/apps/${app.appId}/webhook-endpoints/${ep.id}`;
    // The operator disables the endpoint while the first attempt is in flight (it then gets a 503).
    const ep: Endpoint = await endpoint(app, [
      {
        status: 503,
        before: async () => {
          assert.equal((await admin.call('POST', `${endpointPath()}/disable`)).status, 200);
        },
      },
      { status: 200 },
    ]);
    const { eventId } = await newAccountWithEvent(app);
    await dispatch();
    const result = await delivered(eventId, ep.id);
    assert.deepEqual([result.status, result.attempts], ['abandoned', 2]);
    assert.equal(receiver.requests(ep.path).length, 1, 'the second attempt was not sent');
    const row = await deliveryRow(eventId, ep.id);
    assert.equal(row.status, 'abandoned');
    assert.equal(row.lastError, 'endpoint_disabled: not sent: the endpoint is disabled');
    assert.deepEqual(
      row.attempts.map((a) => [a.responseStatus, a.outcome]),
      [
        [503, 'retry'],
        [null, 'abandoned'],
      ],
    );
  });

  test('after a secret rotation deliveries are signed with the new secret and the old one fails verification', async () => {
    const app = await newApp();
    const ep = await endpoint(app);
    const rotated = await admin.call('POST', `/admin/v1/apps/${app.appId}/webhook-endpoints/${ep.id}/rotate-secret`);
    assert.equal(rotated.status, 200);
    const { eventId } = await newAccountWithEvent(app);
    await dispatch();
    await delivered(eventId, ep.id);
    const req = receiver.requests(ep.path)[0]!;
    assert.equal(verifyWebhook(req.rawBody, req.headers, rotated.body.signingSecret).id, eventId);
    assert.throws(
      () => verifyWebhook(req.rawBody, req.headers, ep.secret),
      (err: unknown) => err instanceof WebhookVerificationError && err.code === 'signature_mismatch',
    );
  });

  test('an operator redelivers an abandoned delivery under the same delivery id', async () => {
    const app = await newApp();
    const ep = await endpoint(app, [{ status: 400 }]);
    const { eventId } = await newAccountWithEvent(app);
    await dispatch();
    assert.equal((await delivered(eventId, ep.id)).status, 'abandoned');
    const row = await deliveryRow(eventId, ep.id);

    const attempts = await admin.call('GET', `/admin/v1/apps/${app.appId}/webhook-deliveries/${row.id}/attempts`);
    assert.equal(attempts.status, 200);
    assert.deepEqual(
      attempts.body.items.map((a: { round: number; attempt: number; responseStatus: number }) => [a.round, a.attempt, a.responseStatus]),
      [[1, 1, 400]],
    );

    const redelivered = await admin.call('POST', `/admin/v1/apps/${app.appId}/webhook-deliveries/${row.id}/redeliver`);
    assert.equal(redelivered.status, 202);
    assert.equal(redelivered.body.delivery.id, row.id);
    assert.equal(redelivered.body.delivery.status, 'pending');
    assert.equal(redelivered.body.delivery.round, 2);
    const twice = await admin.call('POST', `/admin/v1/apps/${app.appId}/webhook-deliveries/${row.id}/redeliver`);
    assert.equal(twice.status, 409);
    assert.equal(twice.body.error.code, 'webhook_delivery_not_abandoned');

    await dispatch();
    const result = await delivered(eventId, ep.id, 2);
    assert.deepEqual(result, { deliveryId: row.id, round: 2, status: 'succeeded', attempts: 1 });
    assert.deepEqual(
      receiver.requests(ep.path).map((r) => r.headers['x-svc-delivery']),
      [row.id, row.id],
    );

    const detail = await admin.call('GET', `/admin/v1/apps/${app.appId}/webhook-deliveries/${row.id}`);
    assert.equal(detail.body.delivery.status, 'succeeded');
    assert.equal(detail.body.delivery.attemptCount, 2);
    assert.deepEqual(
      detail.body.attempts.map((a: { round: number; outcome: string }) => [a.round, a.outcome]),
      [
        [1, 'abandoned'],
        [2, 'succeeded'],
      ],
    );
    const list = await admin.call('GET', `/admin/v1/apps/${app.appId}/webhook-deliveries?endpointId=${ep.id}`);
    assert.deepEqual(
      list.body.items.map((d: { id: string }) => d.id),
      [row.id],
    );
    assert.equal(list.body.nextCursor, null);
  });

  test('an event committed but never dispatched (crash) is delivered once by the dispatcher, and a repeated pass sends nothing again', async () => {
    const h = await getHarness();
    const app = await newApp();
    const ep = await endpoint(app);
    // The state change committed with its event row, then the process died before any dispatch.
    const eventId = await h.db.prisma.$transaction((tx) =>
      accountEvent(tx, app.appId, h.environments.apiVersion, 'acct_crashTest', { accountId: 'acct_crashTest' }),
    );
    assert.equal((await h.db.prisma.event.findUniqueOrThrow({ where: { id: eventId } })).dispatchedAt, null);
    // The service restarts: ensureWebhookDispatcher finds the dispatcher running and leaves it be.
    assert.deepEqual(await h.engine.ensureWebhookDispatcher(), { started: false });
    await dispatch();
    assert.equal((await delivered(eventId, ep.id)).status, 'succeeded');
    const req = receiver.requests(ep.path)[0]!;
    assert.equal(req.headers['x-svc-account-id'], undefined, 'no account header for an event without an account');
    assert.equal(req.headers['x-svc-external-user-id'], undefined);

    // A dispatch pass that crashed after starting the workflow but before clearing the queue mark
    // runs again: the deterministic workflow id makes the second start a no-op.
    await h.db.prisma.webhookDelivery.updateMany({ where: { eventId }, data: { queuedAt: new Date() } });
    await h.db.prisma.event.update({ where: { id: eventId }, data: { dispatchedAt: null } });
    const again = await dispatch();
    assert.equal(again.deliveriesCreated, 0);
    assert.equal((await delivered(eventId, ep.id)).status, 'succeeded');
    assert.equal(receiver.requests(ep.path).length, 1);
    assert.equal(await h.db.prisma.webhookDelivery.count({ where: { eventId } }), 1);
    const row = await deliveryRow(eventId, ep.id);
    assert.equal(row.queuedAt, null);
  });

  test('every attempt re-checks the destination: a private address is refused at delivery time when private destinations are not allowed', async () => {
    const h = await getHarness();
    const app = await newApp();
    // Created while allowed (development), e.g. or a DNS name that later rebinds to a private address.
    const hook = receiver.hook([], 'localhost');
    const created = await admin.call('POST', `/admin/v1/apps/${app.appId}/webhook-endpoints`, { url: hook.url });
    assert.equal(created.status, 201);
    const endpointId: string = created.body.endpoint.id;
    const eventId = await h.db.prisma.$transaction((tx) => accountEvent(tx, app.appId, h.environments.apiVersion, 'acct_x', {}));
    await h.db.prisma.event.update({ where: { id: eventId }, data: { dispatchedAt: new Date() } });
    const delivery = await h.db.prisma.webhookDelivery.create({
      data: { id: 'dlv_privateRecheck1', appId: app.appId, eventId, endpointId, status: 'pending' },
    });
    const report = await attemptDelivery(
      {
        prisma: h.db.prisma,
        logger: h.logger,
        serviceSecret: TEST_SERVICE_SECRET,
        destinations: { allowPrivateDestinations: false },
        http: { timeoutMs: 5_000, maxResponseBytes: 1024 },
      },
      { deliveryId: delivery.id, round: 1, attempt: 1, jitter: 0 },
    );
    assert.deepEqual(report, { step: { action: 'abandoned', reason: 'destination_not_allowed' }, responseStatus: null });
    assert.equal(receiver.requests(hook.path).length, 0, 'nothing was sent');
    const row = await deliveryRow(eventId, endpointId);
    assert.equal(row.status, 'abandoned');
    assert.match(
      row.attempts[0]?.error ?? '',
      /^destination_not_allowed: destination localhost \((127\.0\.0\.1|::1)\) is a loopback address/,
    );
  });
});
