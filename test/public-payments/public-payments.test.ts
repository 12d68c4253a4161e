import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { createApi } from '../../src/http/app';
import { revokeApp } from '../../src/domain/apps/app-credentials';
import { ZAccountBundle } from '../../src/domain/accounts/account.schemas';
import { ZCreatePublicPaymentResponse, ZPublicPaymentConfiguration } from '../../src/domain/payments/public-payment.schemas';
import type { TEnvironments } from '../../src/config/environments';
import { call, newApp, uniqueUserId } from '../support/api-client';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import { cli } from '../support/cli';
import { newMerchant, waitForPayment, type Merchant } from '../support/fixtures';
import { delivered, dispatch, webhookTestbed } from '../webhooks/support/flow';

interface PublicAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
  text: string;
}

let nextIp = 10;
/** A loopback address of its own (127.0.0.0/8 is all loopback), so each test has its own per-IP quota. */
const freshIp = () => `127.0.0.${(nextIp += 1)}`;

/** A payer's wallet: no credential, from a chosen source address (the rate limit's key). */
async function publicCall(
  path: string,
  opts: { ip: string; body?: unknown; rawBody?: string; key?: string | null; baseUrl?: string; method?: string },
): Promise<PublicAnswer> {
  const baseUrl = opts.baseUrl ?? (await getHarness()).baseUrl;
  const body = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (body !== undefined && opts.key !== null) headers['idempotency-key'] = opts.key ?? randomUUID();
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${baseUrl}${path}`,
      { method: opts.method ?? (body === undefined ? 'GET' : 'POST'), headers, localAddress: opts.ip, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed, text });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Every place in a JSON value (keys and strings) that holds an account id. */
function accountIdsIn(value: unknown, path = '$'): string[] {
  if (typeof value === 'string') return /acct_/.test(value) ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => accountIdsIn(v, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => [
      ...(/acct_|accountId/i.test(k) ? [`${path}.${k}`] : []),
      ...accountIdsIn(v, `${path}.${k}`),
    ]);
  }
  return [];
}

/** Turns public receiving on for the merchant's account (through the partner API); answers its payment handle. */
async function acceptPublic(m: Merchant): Promise<string> {
  const on = await call(`/v2/accounts/${m.accountId}/payment-acceptance`, {
    credential: m.cred,
    method: 'PUT',
    body: { publicReceiveEnabled: true, expectedVersion: 1 },
  });
  assert.equal(on.status, 200, on.text);
  return on.body.paymentHandle.handle;
}

/** A merchant whose account accepts public Payments (or, enable false, doesn't), and its handle. */
async function publicMerchant(opts: { enable?: boolean } = {}): Promise<Merchant & { handle: string }> {
  const m = await newMerchant();
  if (opts.enable ?? true) return { ...m, handle: await acceptPublic(m) };
  const read = await call(`/v2/accounts/${m.accountId}`, { credential: m.cred });
  return { ...m, handle: read.body.paymentHandle.handle };
}

const createPath = (appId: string) => `/v2/public/apps/${appId}/payments`;
const configurePath = (appId: string) => `/v2/public/apps/${appId}/payments/configuration`;
const body = (handle: string, overrides: Record<string, unknown> = {}) => ({
  recipient: { handle },
  amount: '10',
  chainId: 31337,
  assetSymbol: 'USDC',
  ...overrides,
});

async function paymentCount(appId: string): Promise<number> {
  return (await getHarness()).db.prisma.payment.count({ where: { appId } });
}

describe('Payment acceptance: a partner turns public receiving on per account', () => {
  test('starts off, turns on and off with expectedVersion, refuses a stale version with 409 and emits account.updated', async () => {
    const h = await getHarness();
    const app = await newApp();
    const created = await call('/v2/accounts', { credential: app, body: { externalUserId: uniqueUserId() } });
    const accountId = created.body.account.id;
    assert.deepEqual(created.body.account.paymentAcceptance, { publicReceiveEnabled: false, version: 1 });
    const put = (b: unknown) => call(`/v2/accounts/${accountId}/payment-acceptance`, { credential: app, method: 'PUT', body: b });
    const on = await put({ publicReceiveEnabled: true, expectedVersion: 1 });
    assert.equal(on.status, 200, on.text);
    ZAccountBundle.parse(on.body);
    assert.deepEqual(on.body.account.paymentAcceptance, { publicReceiveEnabled: true, version: 2 });
    const stale = await put({ publicReceiveEnabled: false, expectedVersion: 1 });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.error.code, 'version_conflict');
    assert.deepEqual(stale.body.error.details, { expectedVersion: 1, currentVersion: 2 });
    const off = await put({ publicReceiveEnabled: false, expectedVersion: 2 });
    assert.deepEqual(off.body.account.paymentAcceptance, { publicReceiveEnabled: false, version: 3 });
    const bad = await put({ publicReceiveEnabled: 'yes', expectedVersion: 3 });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.details.fields[0].field, 'body.publicReceiveEnabled');
    const other = await call(`/v2/accounts/${accountId}/payment-acceptance`, {
      credential: await newApp(),
      method: 'PUT',
      body: { publicReceiveEnabled: true, expectedVersion: 3 },
    });
    assert.equal(other.status, 404);
    const events = await h.db.prisma.event.findMany({
      where: { resourceId: accountId, name: 'account.updated' },
      orderBy: { sequence: 'asc' },
    });
    assert.deepEqual(
      events.map((e) => e.payload),
      [
        { accountId, change: 'payment_acceptance', version: 2, publicReceiveEnabled: true },
        { accountId, change: 'payment_acceptance', version: 3, publicReceiveEnabled: false },
      ],
    );
  });
});

describe('Public Payment creation', () => {
  const bed = webhookTestbed();

  test('configure, create, pay with `sandbox transfer`: the Payment succeeds, the partner sees it, and no account id reaches the payer or the webhooks', async () => {
    const h = await getHarness();
    const ip = freshIp();
    const merchant = await newMerchant();
    const hook = bed.receiver().hook();
    const ep = await bed.admin().call('POST', `/admin/v1/apps/${merchant.cred.appId}/webhook-endpoints`, { url: hook.url });
    assert.equal(ep.status, 201, JSON.stringify(ep.body));
    const m = { ...merchant, handle: await acceptPublic(merchant) };

    const configuration = await publicCall(configurePath(m.cred.appId), { ip });
    assert.equal(configuration.status, 200, configuration.text);
    ZPublicPaymentConfiguration.parse(configuration.body);
    assert.equal(configuration.headers['cache-control'], 'no-store');
    const [destination] = configuration.body.destinations;
    assert.equal(destination.available, true);

    const key = randomUUID();
    const request = body(m.handle, {
      amount: '12.5',
      chainId: destination.chainId,
      assetSymbol: destination.assetSymbol,
      fiatCurrency: 'USD',
      description: 'Tip jar',
    });
    const sentAt = Date.now();
    const created = await publicCall(createPath(m.cred.appId), { ip, body: request, key });
    const answeredAt = Date.now();
    assert.equal(created.status, 201, created.text);
    ZCreatePublicPaymentResponse.parse(created.body);
    assert.deepEqual(accountIdsIn(created.body), []);
    const { payment, checkout, nextAction } = created.body;
    assert.equal(payment.status, 'requires_payment_method');
    assert.equal(payment.paymentAmount.amountAtomic, '12500000');
    assert.deepEqual(payment.recipientDisplay, { displayName: 'Corner Shop', logoUrl: null });
    assert.equal(payment.fiatCurrency, 'USD');
    assert.equal(payment.description, 'Tip jar');
    assert.deepEqual(payment.network, { chainId: 31337, networkCode: 'anvil' });
    // expiresAt = the moment of creation + paymentTtlSeconds: between the request's sending and its answer.
    const ttl = configuration.body.paymentTtlSeconds * 1000;
    assert.ok(Date.parse(payment.expiresAt) >= sentAt + ttl && Date.parse(payment.expiresAt) <= answeredAt + ttl, payment.expiresAt);
    assert.equal(checkout.clientSecret, null);
    assert.equal(checkout.expiresAt, payment.expiresAt);
    assert.match(checkout.paymentUrl, new RegExp(`/checkout/${payment.id}$`));
    assert.equal(nextAction.type, 'transaction');
    assert.equal(nextAction.depositInstructions.amountAtomic, '12500000');

    // An identical retry is the same Payment; the same key with another body is a conflict.
    const replay = await publicCall(createPath(m.cred.appId), { ip, body: request, key });
    assert.equal(replay.status, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replay.body, created.body);
    const conflict = await publicCall(createPath(m.cred.appId), { ip, body: { ...request, amount: '13' }, key });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.error.code, 'idempotency_conflict');

    const row = await h.db.prisma.payment.findUniqueOrThrow({ where: { id: payment.id } });
    assert.equal(row.origin, 'public');
    assert.equal(row.recipientAccountId, m.accountId);

    const paid = await cli(['sandbox', 'transfer', '--to', nextAction.depositInstructions.address, '--amount', '12.5']);
    assert.equal(paid.status, 'mined');
    const done = await waitForPayment(m, payment.id, 'succeeded', (p) => p.status === 'succeeded');
    assert.deepEqual(done.participants, [{ role: 'recipient', accountId: m.accountId }]);
    const listed = await call('/v2/payments', { credential: m.cred });
    assert.deepEqual(
      listed.body.data.map((p: { id: string }) => p.id),
      [payment.id],
    );

    // Every event of the Payment is written without an account; its deliveries carry none.
    const events = await h.db.prisma.event.findMany({ where: { resourceId: payment.id }, orderBy: { sequence: 'asc' } });
    assert.deepEqual(
      events.map((e) => e.name),
      ['payment.created', 'payment.processing', 'payment.accepted', 'payment.succeeded'],
    );
    await dispatch();
    for (const e of events) {
      assert.equal(e.accountId, null);
      assert.equal((await delivered(e.id, ep.body.endpoint.id)).status, 'succeeded');
    }
    const deliveries = bed.receiver().requests(hook.path);
    const paymentDeliveries = deliveries.filter((d) => String(d.headers['x-svc-event']).startsWith('payment.'));
    assert.equal(paymentDeliveries.length, events.length);
    for (const d of paymentDeliveries) {
      assert.equal(d.headers['x-svc-account-id'], undefined);
      assert.equal(d.headers['x-svc-external-user-id'], undefined);
      const envelope = JSON.parse(d.rawBody.toString('utf8'));
      assert.equal(envelope.payload.paymentId, payment.id);
      assert.deepEqual(accountIdsIn(envelope), []);
      assert.equal(d.rawBody.includes('acct_'), false);
    }
    // The control: the account's own event (payment acceptance turned on) does name the account.
    const accountEvent = await h.db.prisma.event.findFirstOrThrow({
      where: { resourceId: m.accountId, name: 'account.updated', payload: { path: ['change'], equals: 'payment_acceptance' } },
    });
    await delivered(accountEvent.id, ep.body.endpoint.id);
    const accountDelivery = bed
      .receiver()
      .requests(hook.path)
      .find((d) => d.headers['x-svc-event-id'] === accountEvent.id);
    assert.equal(accountDelivery?.headers['x-svc-account-id'], m.accountId);
  });

  test('the config reports publicPaymentCreation as the endpoints act on it', async () => {
    const ip = freshIp();
    const m = await publicMerchant();
    const config = await call('/v2/partners/config', { credential: m.cred });
    const block = config.body.capabilities.payments.publicPaymentCreation;
    const configuration = await publicCall(block.configureEndpoint, { ip });
    assert.equal(configuration.status, 200);
    const { appId, recipientReference, idempotencyKey, rateLimit, ...same } = configuration.body;
    assert.deepEqual(same, block);
    assert.equal(appId, m.cred.appId);
    assert.equal(recipientReference, 'payment_handle');
    assert.deepEqual(idempotencyKey, { required: true, minLength: 16, maxLength: 256 });
    assert.deepEqual(rateLimit, { scope: 'client_ip', points: 30, windowSeconds: 60 });
    assert.equal(block.enabled, true);
    assert.equal(block.authentication, 'none');
    assert.equal(block.purpose, 'wallet_payment');
    assert.equal(block.createEndpoint, createPath(m.cred.appId));
    assert.deepEqual(block.allowedFiatCurrencies, ['USD']);
    assert.deepEqual(
      block.destinations.map((d: any) => [d.chainId, d.networkCode, d.assetSymbol, d.minimumAmount, d.maximumAmount, d.available]),
      [[31337, 'anvil', 'USDC', '1', '1000', true]],
    );

    // Each destination's bounds are exactly what create accepts.
    const [d] = block.destinations;
    const at = (amount: string) => publicCall(block.createEndpoint, { ip, body: body(m.handle, { amount }) });
    assert.equal((await at(d.minimumAmount)).status, 201);
    assert.equal((await at(d.maximumAmount)).status, 201);
    const below = await at('0.999999');
    assert.equal(below.status, 422);
    assert.deepEqual(below.body.error, {
      code: 'payment_amount_below_minimum',
      message: below.body.error.message,
      details: { minimumAmount: '1' },
    });
    const above = await at('1000.000001');
    assert.equal(above.status, 422);
    assert.deepEqual(above.body.error.details, { maximumAmount: '1000' });
    assert.equal(above.body.error.code, 'payment_amount_above_maximum');
    assert.equal(await paymentCount(m.cred.appId), 2);

    // Where it is off, the config says so and both endpoints answer 424.
    const production = await newApp({ environment: 'production' });
    const off = (await call('/v2/partners/config', { credential: production })).body.capabilities.payments.publicPaymentCreation;
    assert.equal(off.enabled, false);
    assert.deepEqual(off.methods, []);
    assert.equal((await publicCall(off.configureEndpoint, { ip })).status, 424);
  });

  test('refusals: environment off, account not accepting, payments module unavailable, unknown app, destination not allowed, bad input; nothing is created', async () => {
    const h = await getHarness();
    const ip = freshIp();
    const m = await publicMerchant();

    // Environment off (production: publicPayments.enabled false).
    const production = await newApp({ environment: 'production' });
    const prodAccount = await call('/v2/accounts', { credential: production, body: { externalUserId: uniqueUserId() } });
    const envOff = await publicCall(createPath(production.appId), { ip, body: body(prodAccount.body.paymentHandle.handle) });
    assert.equal(envOff.status, 424);
    assert.deepEqual(envOff.body.error.details, { reasonCode: 'public_payments_disabled' });
    assert.equal(envOff.body.error.code, 'chain_config_missing');

    // The payments module unavailable to the app (no v2:payments scope).
    const noPayments = await newApp({ scopes: ['v2:accounts'] });
    const npAccount = await call('/v2/accounts', { credential: noPayments, body: { externalUserId: uniqueUserId() } });
    await call(`/v2/accounts/${npAccount.body.account.id}/payment-acceptance`, {
      credential: noPayments,
      method: 'PUT',
      body: { publicReceiveEnabled: true, expectedVersion: 1 },
    });
    const moduleOff = await publicCall(createPath(noPayments.appId), { ip, body: body(npAccount.body.paymentHandle.handle) });
    assert.equal(moduleOff.status, 424);
    assert.deepEqual(moduleOff.body.error.details, { reasonCode: 'credential_scope_missing' });
    const npConfig = (await call('/v2/partners/config', { credential: noPayments })).body.capabilities.payments.publicPaymentCreation;
    assert.equal(npConfig.enabled, false);
    assert.equal(npConfig.destinations[0].disabledReason, 'credential_scope_missing');

    // Unknown app: 404.
    const unknownApp = await publicCall(createPath('app_doesNotExist0000000000'), { ip, body: body(m.handle) });
    assert.equal(unknownApp.status, 404);
    assert.equal(unknownApp.body.error.code, 'not_found');

    // An account that doesn't accept public Payments answers exactly like an unknown handle.
    const closed = await publicMerchant({ enable: false });
    const refused = await publicCall(createPath(closed.cred.appId), { ip, body: body(closed.handle) });
    const unknown = await publicCall(createPath(closed.cred.appId), { ip, body: body('nosuchhandle00') });
    assert.equal(refused.status, 404);
    assert.deepEqual(refused.body, unknown.body);
    // Another app's handle is not found in this app either.
    const foreign = await publicCall(createPath(closed.cred.appId), { ip, body: body(m.handle) });
    assert.deepEqual(foreign.body, unknown.body);

    // Destinations outside the configuration.
    for (const where of [{ chainId: 1 }, { assetSymbol: 'DAI' }]) {
      const res = await publicCall(createPath(m.cred.appId), { ip, body: body(m.handle, where) });
      assert.equal(res.status, 422, res.text);
      assert.deepEqual(res.body.error.details, { reasonCode: 'destination_not_allowed' });
    }

    // Bad input: 400 naming the field, before anything is stored.
    const cases: Array<[unknown, string]> = [
      [body(m.handle, { accountId: m.accountId }), 'body'],
      [{ ...body(m.handle), recipient: { accountId: m.accountId } }, 'body.recipient.handle'],
      [body(m.handle, { amount: '1.0000001' }), 'body.amount'],
      [body(m.handle, { amount: 10 }), 'body.amount'],
      [body(m.handle, { fiatCurrency: 'EUR' }), 'body.fiatCurrency'],
      [body(m.handle, { description: 'nul\u0000here' }), 'body.description'],
      [body(m.handle, { description: 'x'.repeat(281) }), 'body.description'],
    ];
    for (const [b, field] of cases) {
      const res = await publicCall(createPath(m.cred.appId), { ip, body: b });
      assert.equal(res.status, 400, `${JSON.stringify(b)}: ${res.text}`);
      assert.ok(
        res.body.error.details.fields.some((f: { field: string }) => f.field.startsWith(field)),
        `${field}: ${res.text}`,
      );
    }
    const noKey = await publicCall(createPath(m.cred.appId), { ip, body: body(m.handle), key: null });
    assert.equal(noKey.status, 400);
    assert.equal(noKey.body.error.details.fields[0].field, 'header.Idempotency-Key');
    const shortKey = await publicCall(createPath(m.cred.appId), { ip, body: body(m.handle), key: 'k1' });
    assert.equal(shortKey.status, 400);

    for (const appId of [m.cred.appId, closed.cred.appId, production.appId, noPayments.appId]) assert.equal(await paymentCount(appId), 0);
    assert.equal(
      await h.db.prisma.event.count({ where: { appId: { in: [m.cred.appId, closed.cred.appId] }, resourceType: 'payment' } }),
      0,
    );
  });

  test('a revoked app takes no public Payment and shows no checkout page: each answers as unknown, and nothing is created', async () => {
    const h = await getHarness();
    const ip = freshIp();
    const m = await publicMerchant();
    const created = await publicCall(createPath(m.cred.appId), { ip, body: body(m.handle) });
    assert.equal(created.status, 201, created.text);
    const paymentId = created.body.payment.id as string;
    assert.equal((await fetch(`${h.baseUrl}/checkout/${paymentId}`)).status, 200, 'its checkout page, while the app is live');

    await h.db.prisma.$transaction((tx) => revokeApp(tx, m.cred.appId));
    assert.equal((await publicCall(configurePath(m.cred.appId), { ip })).status, 404);
    const refused = await publicCall(createPath(m.cred.appId), { ip, body: body(m.handle) });
    assert.equal(refused.status, 404, refused.text);
    assert.equal(refused.body.error.code, 'not_found');
    assert.equal((await fetch(`${h.baseUrl}/checkout/${paymentId}`)).status, 404, 'its checkout page, once revoked');
    assert.equal(await paymentCount(m.cred.appId), 1, 'only the Payment made before the revocation');
  });

  test('generated amounts: accepted exactly within the destination bounds, refused outside, and nothing created when refused', async () => {
    const ip = freshIp();
    const m = await publicMerchant();
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(fc.bigInt({ min: 1n, max: 2_000_000_000n }), async (atomic) => {
        const amount = `${atomic / 1_000_000n}.${String(atomic % 1_000_000n).padStart(6, '0')}`.replace(/\.?0+$/, '');
        const res = await publicCall(createPath(m.cred.appId), { ip, body: body(m.handle, { amount }) });
        const inside = atomic >= 1_000_000n && atomic <= 1_000_000_000n;
        assert.equal(res.status, inside ? 201 : 422, `${amount}: ${res.text}`);
        if (inside) accepted += 1;
        assert.equal(await paymentCount(m.cred.appId), accepted);
      }),
      { numRuns: 20 },
    );
  });
});

describe('Public Payment creation is rate limited per client IP', () => {
  let server: Server | undefined;
  let baseUrl = '';
  const POINTS = 3;
  before(async () => {
    const h = await getHarness();
    // The sandbox with a small per-IP quota and a long window: N+1 requests can't straddle two windows.
    const environments: TEnvironments = structuredClone(h.environments);
    environments.environments.sandbox.publicPayments!.rateLimit = { points: POINTS, windowSeconds: 3600 };
    const api = createApi(await apiDepsOnHarness({ environments, engine: h.engine, chains: h.chain.chains }));
    server = await new Promise<Server>((resolve) => {
      const s = api.listen(0, '127.0.0.1', () => resolve(s));
    });
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  test('N requests pass, the N+1th is 429 with Retry-After and the RateLimit headers, another IP is not limited, and a limited create creates nothing', async () => {
    const m = await publicMerchant();
    const [ip, otherIp] = [freshIp(), freshIp()];
    for (let i = 0; i < POINTS - 1; i += 1) {
      const ok = await publicCall(configurePath(m.cred.appId), { ip, baseUrl });
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.headers['ratelimit-limit'], String(POINTS));
      assert.equal(ok.headers['ratelimit-remaining'], String(POINTS - 1 - i));
    }
    // The quota covers both public routes.
    const created = await publicCall(createPath(m.cred.appId), { ip, baseUrl, body: body(m.handle) });
    assert.equal(created.status, 201, created.text);
    const limited = await publicCall(createPath(m.cred.appId), { ip, baseUrl, body: body(m.handle) });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'rate_limited');
    const retryAfter = Number(limited.headers['retry-after']);
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 3600, String(limited.headers['retry-after']));
    assert.equal(limited.headers['ratelimit-limit'], String(POINTS));
    assert.equal(limited.headers['ratelimit-remaining'], '0');
    assert.equal(await paymentCount(m.cred.appId), 1);

    const other = await publicCall(configurePath(m.cred.appId), { ip: otherIp, baseUrl });
    assert.equal(other.status, 200);
    assert.equal(other.headers['ratelimit-remaining'], String(POINTS - 1));
  });
});
