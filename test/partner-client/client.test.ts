import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import {
  createPartnerClient,
  expressWebhook,
  isKnownEvent,
  koaWebhook,
  WEBHOOK_EVENT_NAMES,
  type AnyWebhookEvent,
} from '../../clients/typescript/src';
import { EVENT_NAMES } from '../../src/domain/event-log/event-catalog';
import { CLIENT_SCHEMA_FILE, generateClientSchema } from '../../scripts/generate-client';
import { newApp } from '../support/api-client';
import { eventually, newPayer, payTo } from '../support/chain';
import { getHarness } from '../support/harness';
import { delivered, dispatch, webhookTestbed } from '../webhooks/support/flow';

/** A receiver as a partner writes it with the client's Koa helper: verified events, in arrival order. */
async function koaReceiver(secret: () => string) {
  const events: AnyWebhookEvent[] = [];
  const app = new Koa();
  app.use(async (ctx, next) => koaWebhook({ secret: secret() })(ctx, next));
  app.use((ctx) => {
    events.push(ctx.state.webhookEvent as AnyWebhookEvent);
    ctx.status = 200;
  });
  const server = await new Promise<http.Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    events,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('The partner client package', () => {
  test('its schema is what openapi-typescript makes of the served document, and its event names are the catalog', async () => {
    assert.equal(
      readFileSync(CLIENT_SCHEMA_FILE, 'utf8'),
      await generateClientSchema(),
      'run `npm run client:generate` and commit the schema',
    );
    assert.deepEqual([...WEBHOOK_EVENT_NAMES], [...EVENT_NAMES]);
  });

  describe("the README's receive Payment, through the generated client, with a verified delivery", () => {
    const bed = webhookTestbed();
    let secret = '';
    let receiver: Awaited<ReturnType<typeof koaReceiver>>;
    before(async () => {
      receiver = await koaReceiver(() => secret);
    });
    after(async () => receiver.close());

    test('creates the account, wallet, settlement profile and Payment, is paid, and the delivery verifies', async () => {
      const h = await getHarness();
      const cred = await newApp();
      const hook = await bed
        .admin()
        .call('POST', `/admin/v1/apps/${cred.appId}/webhook-endpoints`, { url: receiver.url, events: ['payment.succeeded'] });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      secret = hook.body.signingSecret;
      const client = createPartnerClient({ baseUrl: h.baseUrl, appId: cred.appId, appSecret: cred.appSecret });

      const config = await client.GET('/v2/partners/config');
      assert.equal(config.response.status, 200, JSON.stringify(config.error));
      const account = await client.POST('/v2/accounts', { body: { externalUserId: `shop-${Date.now()}` } });
      assert.ok(account.data, JSON.stringify(account.error));
      const accountId = account.data.account.id;
      const address = privateKeyToAccount(generatePrivateKey()).address;
      const wallet = await client.POST('/v2/accounts/{accountId}/connected-wallets', {
        params: { path: { accountId } },
        body: { chainId: h.chainId, address },
      });
      assert.ok(wallet.data, JSON.stringify(wallet.error));
      const profile = await client.PUT('/v2/accounts/{accountId}/settlement-profile', {
        params: { path: { accountId } },
        body: { connectedWalletId: wallet.data.connectedWallets[0]!.id },
      });
      assert.equal(profile.response.status, 200, JSON.stringify(profile.error));
      const key = `order ${Date.now()}/1`;
      const created = await client.POST('/v2/payments', {
        params: { header: { 'Idempotency-Key': key } },
        body: { intent: 'receive', amount: '12.50', assetCode: 'USDC', chainId: h.chainId, destination: { type: 'upa', accountId } },
      });
      assert.ok(created.data, JSON.stringify(created.error));
      const payment = created.data.payment;
      // Had the create timed out, its key says whether it ran (the client percent-encodes the key).
      const lookedUp = await client.GET('/v2/idempotency-keys/{key}', { params: { path: { key } } });
      assert.ok(lookedUp.data, JSON.stringify(lookedUp.error));
      assert.deepEqual([lookedUp.data.status, lookedUp.data.response?.resourceId], ['completed', payment.id]);
      const refused = await client.POST('/v2/payments', {
        params: { header: { 'Idempotency-Key': `bad-${Date.now()}` } },
        body: { intent: 'receive', amount: 'lots', assetCode: 'USDC', chainId: h.chainId, destination: { type: 'upa', accountId } },
      });
      assert.equal(refused.response.status, 400);
      assert.equal(refused.error?.error.code, 'bad_request', 'errors come back as the typed envelope');

      const instructions = payment.funding?.depositAddress;
      assert.ok(instructions, 'a receive Payment has deposit instructions');
      await payTo(await newPayer(12_500_000n), instructions.address, 12_500_000n);
      const succeeded = await eventually(async (saw) => {
        const read = await client.GET('/v2/payments/{paymentId}', { params: { path: { paymentId: payment.id } } });
        assert.ok(read.data, `GET /v2/payments/{id}: ${read.response.status} ${JSON.stringify(read.error)}`);
        saw(read.data.payment.status);
        return read.data.payment.status === 'succeeded' ? read.data.payment : undefined;
      }, `${payment.id} succeeded`);
      assert.equal(succeeded.statusVersion, 4);

      await dispatch();
      const event = await h.db.prisma.event.findFirstOrThrow({ where: { resourceId: payment.id, name: 'payment.succeeded' } });
      assert.equal((await delivered(event.id, hook.body.endpoint.id)).status, 'succeeded');
      assert.equal(receiver.events.length, 1);
      const got = receiver.events[0]!;
      assert.ok(isKnownEvent(got) && got.name === 'payment.succeeded', got.name);
      // Typed by name: the payload's fields need no cast.
      assert.deepEqual(
        [got.id, got.payload.paymentId, got.payload.status, got.payload.statusVersion, got.resourceSequence],
        [event.id, payment.id, 'succeeded', 4, Number(event.resourceSequence)],
      );
    });
  });

  test('the Express helper verifies the raw bytes, and answers 400 to a body changed in transit', async () => {
    const h = await getHarness();
    const { signDelivery } = await import('../../src/domain/webhooks/signing-secrets');
    const seen: AnyWebhookEvent[] = [];
    const handle = expressWebhook({ secret: 'whsec_test' });
    const server = http.createServer((req, res) =>
      handle(req, res, (err?: unknown) => {
        if (err) throw err;
        seen.push((req as { webhookEvent?: AnyWebhookEvent }).webhookEvent!);
        res.end('ok');
      }),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const body = JSON.stringify({
        id: 'evt_1',
        name: 'account.created',
        apiVersion: h.environments.apiVersion,
        createdAt: new Date().toISOString(),
        resourceSequence: 1,
        payload: { accountId: 'acct_1' },
      });
      const t = Math.floor(Date.now() / 1000);
      const headers = {
        'content-type': 'application/json',
        'x-svc-timestamp': String(t),
        'x-svc-delivery': 'dlv_1',
        'x-svc-event-id': 'evt_1',
        'x-svc-signature': `t=${t},v1=${signDelivery('whsec_test', t, 'dlv_1', 'evt_1', Buffer.from(body))}`,
      };
      const ok = await fetch(url, { method: 'POST', headers, body });
      assert.equal(ok.status, 200);
      const changed = await fetch(url, { method: 'POST', headers, body: body.replace('acct_1', 'acct_2') });
      assert.equal(changed.status, 400);
      assert.deepEqual(await changed.json(), { error: 'signature_mismatch' });
      assert.deepEqual(
        seen.map((e) => [e.id, e.payload]),
        [['evt_1', { accountId: 'acct_1' }]],
      );
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
