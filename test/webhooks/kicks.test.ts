import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { newApp } from '../support/api-client';
import { getHarness } from '../support/harness';
import { until as poll } from '../support/until';
import type { AppCredential } from '../../src/domain/apps/apps';
import type { ChannelListener } from '../../src/db/listener';
import { startWebhookKicks, WEBHOOK_KICKS_APPLICATION_NAME } from '../../src/runtime/webhook-kicks';
import { createWebhookActivities } from '../../activities/webhooks';
import { TEST_SERVICE_SECRET } from '../support/harness';
import { verifyWebhook } from '../../src/webhooks/verify';
import { startAdminApi, type AdminApi } from './support/admin';
import { newAccountWithEvent, dispatch, ensureTestDispatcher, stopTestDispatcher } from './support/flow';
import { startReceiver, type ReceivedRequest, type Receiver } from './support/receiver';

/** Long enough for a kicked pass and its delivery on a loaded machine: a bound, not a timing assertion. */
const BOUND_MS = 60_000;

const until = <T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> => poll(probe, what, BOUND_MS);

/** The API guide's "Delivery headers" table: each header's name, in order. */
function guideDeliveryHeaders(): string[] {
  const guide = readFileSync(path.join(__dirname, '../../docs/api-guide.md'), 'utf8');
  const section = guide.slice(guide.indexOf('**Delivery headers.**'), guide.indexOf('**Latency.**'));
  return [...section.matchAll(/^\| `(x-svc-[a-z-]+)` \|/gm)].map((m) => m[1]!);
}

/**
 * A delivery as a partner reads it from the guide alone: every x-svc header it carries is in the
 * guide's table, and the signature is the HMAC-SHA256 the guide describes (the whole secret as the key,
 * over `<t>.<delivery>.<event id>.` and the raw bytes), recomputed here without the client's verifier.
 */
function deliveryReadsAsTheGuideSays(req: ReceivedRequest, secret: string): void {
  const documented = guideDeliveryHeaders();
  const sent = Object.keys(req.headers).filter((k) => k.startsWith('x-svc-'));
  assert.deepEqual(
    sent.filter((k) => !documented.includes(k)),
    [],
    `documented: ${documented.join(', ')}`,
  );
  const header = (name: string) => String(req.headers[name]);
  const v1 = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header('x-svc-signature'));
  assert.ok(v1, header('x-svc-signature'));
  assert.equal(v1[1], header('x-svc-timestamp'));
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(Buffer.concat([Buffer.from(`${v1[1]}.${header('x-svc-delivery')}.${header('x-svc-event-id')}.`), req.rawBody]))
    .digest('hex');
  assert.equal(v1[2], mac);
}

/**
 * The after-commit path: with the dispatcher's poll at 30 days (and no time skipping, since nothing
 * awaits a workflow result here), only the events table's NOTIFY, heard by the worker's listener, can
 * get an event to the receiver. Nobody calls dispatchNow or the admin kick.
 */
describe('Webhook kicks after commit', () => {
  let admin: AdminApi;
  let receiver: Receiver;
  let kicks: ChannelListener;

  before(async () => {
    const h = await getHarness();
    admin = await startAdminApi({ allowPrivate: true });
    receiver = await startReceiver();
    await ensureTestDispatcher();
    // Settles the dispatcher's first pass, so what follows can only be delivered by a kick.
    await dispatch();
    kicks = startWebhookKicks({ url: h.databaseUrl, engine: h.engine, logger: h.logger });
    await kicks.ready;
  });

  after(async () => {
    await kicks.stop();
    await stopTestDispatcher('webhook kick tests done');
    await admin.close();
    await receiver.close();
  });

  async function endpoint(app: AppCredential) {
    const hook = receiver.hook();
    const res = await admin.call('POST', `/admin/v1/apps/${app.appId}/webhook-endpoints`, { url: hook.url });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return { secret: res.body.signingSecret as string, path: hook.path };
  }

  /** Creates an account through the API and waits for its account.created at the receiver, verified. */
  async function accountCreatedArrives(app: AppCredential, ep: { secret: string; path: string }) {
    const { accountId, eventId } = await newAccountWithEvent(app);
    const req = await until<ReceivedRequest>(`event ${eventId} delivered`, () =>
      receiver.requests(ep.path).find((r) => r.headers['x-svc-event-id'] === eventId),
    );
    const envelope = verifyWebhook(req.rawBody, req.headers, ep.secret);
    deliveryReadsAsTheGuideSays(req, ep.secret);
    assert.equal(envelope.id, eventId);
    assert.equal(envelope.name, 'account.created');
    assert.deepEqual(envelope.payload, { accountId, externalUserId: (envelope.payload as { externalUserId: string }).externalUserId });
  }

  test('an event committed by an API call is delivered, signed, with no poll and no dispatchNow', async () => {
    const app = await newApp();
    const ep = await endpoint(app);
    await accountCreatedArrives(app, ep);
  });

  test('the listener reconnects after its backend is terminated and still kicks', async () => {
    const h = await getHarness();
    const app = await newApp();
    const ep = await endpoint(app);
    const listenerPids = async () =>
      (
        await h.db.prisma.$queryRaw<Array<{ pid: number }>>`
          SELECT pid FROM pg_stat_activity
          WHERE application_name = ${WEBHOOK_KICKS_APPLICATION_NAME} AND datname = current_database() AND query LIKE 'LISTEN%'`
      ).map((r) => r.pid);
    const [before] = await listenerPids();
    assert.ok(before, 'the listener has its session');
    const terminated = await h.db.prisma.$queryRaw<Array<{ ok: boolean }>>`SELECT pg_terminate_backend(${before}::int) AS ok`;
    assert.deepEqual(terminated, [{ ok: true }]);
    const after = await until('the listener back on a new session', async () => (await listenerPids()).find((pid) => pid !== before));
    assert.notEqual(after, before);
    // Two in a row: the second commits after the first arrived, so a kick from the reconnect alone
    // could not carry both.
    await accountCreatedArrives(app, ep);
    await accountCreatedArrives(app, ep);
  });
});

/**
 * The service's shape: the worker's listener runs the dispatch pass itself on each NOTIFY. With the
 * dispatcher workflow stopped, only that pass can start the delivery workflow.
 */
describe('Webhook dispatch in the listener', () => {
  let admin: AdminApi;
  let receiver: Receiver;

  before(async () => {
    admin = await startAdminApi({ allowPrivate: true });
    receiver = await startReceiver();
  });

  after(async () => {
    await admin.close();
    await receiver.close();
  });

  test("an event committed by an API call is delivered by the listener's pass, with no dispatcher workflow", async () => {
    const h = await getHarness();
    await stopTestDispatcher('the listener dispatches alone');
    const { dispatchWebhookEvents } = createWebhookActivities({
      prisma: h.db.prisma,
      logger: h.logger,
      serviceSecret: TEST_SERVICE_SECRET,
      destinations: { allowPrivateDestinations: true },
      engine: h.engine,
    });
    let passes = 0;
    const kicks = startWebhookKicks({
      url: h.databaseUrl,
      engine: h.engine,
      logger: h.logger,
      dispatch: async () => {
        passes += 1;
        return dispatchWebhookEvents({ batchSize: 100 });
      },
    });
    try {
      await kicks.ready;
      const app = await newApp();
      const hook = receiver.hook();
      const res = await admin.call('POST', `/admin/v1/apps/${app.appId}/webhook-endpoints`, { url: hook.url });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const { eventId } = await newAccountWithEvent(app);
      const req = await until<ReceivedRequest>(`event ${eventId} delivered`, () =>
        receiver.requests(hook.path).find((r) => r.headers['x-svc-event-id'] === eventId),
      );
      assert.equal(verifyWebhook(req.rawBody, req.headers, res.body.signingSecret as string).id, eventId);
      assert.ok(passes >= 1, 'the listener ran a pass');
    } finally {
      await kicks.stop();
    }
  });

  test('a pass that fails kicks the dispatcher workflow instead', async () => {
    const h = await getHarness();
    let kicked = 0;
    const kicks = startWebhookKicks({
      url: h.databaseUrl,
      engine: {
        kickWebhookDispatcher: async () => {
          kicked += 1;
        },
      },
      logger: h.logger,
      dispatch: () => Promise.reject(new Error('database away')),
    });
    try {
      await kicks.ready;
      // The connect's own pass fails first; a NOTIFY's pass fails again.
      await until('a kick after the failed pass on connect', () => (kicked >= 1 ? true : undefined));
      await h.db.prisma.$executeRaw`NOTIFY webhook_events`;
      await until('a kick after the failed pass on a notification', () => (kicked >= 2 ? true : undefined));
    } finally {
      await kicks.stop();
    }
  });
});
