import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fc from 'fast-check';
import { ERROR_STATUS } from '../../src/domain/errors';
import { basicAuth, call, newApp } from '../support/api-client';
import { getHarness } from '../support/harness';
import { createPayment, newMerchant, type Merchant } from '../payments/fixtures';
import { ADMIN_TOKEN, startAdminApi, type AdminApi } from '../webhooks/support/admin';
import { listRoutes } from './fuzz/routes';
import { ROUTE_MODELS, type FuzzFixture } from './fuzz/models';
import { applyMutation, fuzzCase, toRequest, validDraft, type FuzzRequest } from './fuzz/requests';

/**
 * Issue 10, item 3: every endpoint's body, path, query and headers, mutated as a buggy client
 * would, against the real app, PostgreSQL and Temporal. FUZZ_RUNS (default 150) sets how many
 * requests; FUZZ_SEED (and FUZZ_PATH) replay a failing run (fast-check prints both).
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
/** With FUZZ_SEED, FUZZ_PATH (the `path` fast-check prints) replays just the failing case. */
const PATH = process.env.FUZZ_PATH;
/** An answer later than this is a hang: a correctness property, not a performance one. */
const ANSWER_WITHIN_MS = 5000;

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * Puts the request on the wire as written (node:http, not fetch: fetch normalises the path, and
 * refuses empty or repeated headers, which are exactly what a buggy client sends).
 */
async function send(baseUrl: string, req: FuzzRequest): Promise<Answer> {
  const body = req.body === undefined ? undefined : Buffer.from(req.body);
  const headers = { ...req.headers, ...(body ? { 'content-length': String(body.length) } : {}) };
  try {
    return await new Promise<Answer>((resolve, reject) => {
      const r = http.request(`${baseUrl}${req.target}`, { method: req.method, headers, agent: false, signal: AbortSignal.timeout(ANSWER_WITHIN_MS) }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
          resolve({ status: res.statusCode ?? 0, headers: h, text: Buffer.concat(chunks).toString('utf8') });
        });
      });
      r.on('error', reject);
      r.end(body);
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') {
      assert.fail(`no answer within ${ANSWER_WITHIN_MS} ms to ${req.method} ${req.target.slice(0, 200)}`);
    }
    throw err;
  }
}

/** The spec's error envelope, with a code from the one table (src/domain/errors.ts) at its status. */
function assertEnvelope(answer: Answer): void {
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    assert.fail(`a ${answer.status} whose body is not JSON: ${answer.text.slice(0, 200)}`);
  }
  const error = (body as { error?: { code?: unknown; message?: unknown } }).error;
  assert.ok(error && typeof error === 'object', `a ${answer.status} without the error envelope: ${answer.text.slice(0, 200)}`);
  assert.deepEqual(Object.keys(error).filter((k) => !['code', 'message', 'details'].includes(k)), []);
  assert.ok(typeof error.code === 'string' && error.code.length >= 1 && error.code.length <= 128, `code: ${String(error.code)}`);
  assert.ok(typeof error.message === 'string' && error.message.length >= 1 && error.message.length <= 1000, `message of ${error.code}`);
  assert.ok(Object.hasOwn(ERROR_STATUS, error.code), `code ${error.code} is not in the error table`);
  assert.equal(ERROR_STATUS[error.code as keyof typeof ERROR_STATUS], answer.status, `${error.code} answered with ${answer.status}`);
}

/**
 * What a request could create or change, scoped to the fuzz's two apps (the rest of the suite's
 * workflows keep writing their own rows meanwhile). Idempotency records of the request's own key
 * are left out: a refusal stored under its key is how the identical retry gets the identical refusal.
 */
async function snapshot(f: FuzzFixture, idempotencyKey: string | undefined): Promise<Record<string, unknown>> {
  const h = await getHarness();
  const apps = [f.cred.appId, f.other.appId];
  const { rows } = await h.db.pool.query<{ s: Record<string, unknown> }>(
    `SELECT json_build_object(
       'accounts', (SELECT json_build_array(count(*), max(updated_at)) FROM accounts WHERE app_id = ANY($1)),
       'displayProfileRevisions', (SELECT count(*) FROM display_profile_revisions r JOIN accounts a ON a.id = r.account_id WHERE a.app_id = ANY($1)),
       'connectedWallets', (SELECT json_build_array(count(*), max(w.updated_at)) FROM connected_wallets w JOIN accounts a ON a.id = w.account_id WHERE a.app_id = ANY($1)),
       'settlementProfiles', (SELECT json_build_array(count(*), max(s.updated_at)) FROM settlement_profiles s JOIN accounts a ON a.id = s.account_id WHERE a.app_id = ANY($1)),
       'paymentHandles', (SELECT count(*) FROM payment_handles p JOIN accounts a ON a.id = p.account_id WHERE a.app_id = ANY($1)),
       'payments', (SELECT json_build_array(count(*), sum(status_version)) FROM payments WHERE app_id = ANY($1)),
       'paymentPayers', (SELECT count(*) FROM payment_payers pp JOIN payments p ON p.id = pp.payment_id WHERE p.app_id = ANY($1)),
       'depositAddresses', (SELECT count(*) FROM deposit_addresses WHERE app_id = ANY($1)),
       'bankAccounts', (SELECT json_build_array(count(*), max(updated_at)) FROM bank_accounts WHERE app_id = ANY($1)),
       'webhookEndpoints', (SELECT json_build_array(count(*), max(updated_at)) FROM webhook_endpoints WHERE app_id = ANY($1)),
       'idempotencyRecords', (SELECT count(*) FROM idempotency_records WHERE app_id = ANY($1) AND key IS DISTINCT FROM $2
         -- The client API keeps an account's keys as client:<accountId>:<key>, public creation as public<TAB>:<key>.
         AND ($2::text IS NULL OR (key NOT LIKE 'client:%' AND key NOT LIKE 'public' || chr(9) || ':%') OR right(key, length($2::text) + 1) <> ':' || $2::text)),
       'events', (SELECT count(*) FROM events WHERE app_id = ANY($1)),
       'ledgerPostings', (SELECT count(*) FROM ledger_postings WHERE app_id = ANY($1)),
       'custodyAddresses', (SELECT count(*) FROM custody_addresses)
     ) AS s`,
    [apps, idempotencyKey ?? null],
  );
  return rows[0]!.s;
}

/** A Payment the request touched still answers its GET, and a valid cancel is answered (200 or 409). */
async function assertPaymentUsable(f: FuzzFixture): Promise<void> {
  const read = await call(`/v2/payments/${f.paymentId}`, { credential: f.cred });
  assert.equal(read.status, 200, `GET of the touched Payment: ${read.text}`);
  const cancel = await send((await getHarness()).baseUrl, {
    method: 'POST',
    target: `/v2/payments/${f.paymentId}/cancel`,
    headers: { authorization: basicAuth(f.cred.appId, f.cred.appSecret), 'content-type': 'application/json' },
    body: JSON.stringify({ reasonCode: 'abandoned' }),
  });
  const code = cancel.status === 409 ? (JSON.parse(cancel.text) as { error: { code: string } }).error.code : undefined;
  assert.ok(cancel.status === 200 || (code && ERROR_STATUS[code as keyof typeof ERROR_STATUS] === 409), `cancel of the touched Payment: ${cancel.status} ${cancel.text}`);
}

describe('Fuzzing every endpoint as a buggy client would call it', () => {
  let api: AdminApi;
  let merchant: Merchant;
  let f: FuzzFixture;

  before(async () => {
    // The whole surface: partner, client, open and admin routes (ADMIN_API_TOKEN set), on the shared harness.
    api = await startAdminApi({ allowPrivate: true, withEngine: true });
    merchant = await newMerchant();
    const account = await call(`/v2/accounts/${merchant.accountId}`, { credential: merchant.cred });
    const deposit = await call(`/v2/accounts/${merchant.accountId}/deposit-addresses`, { credential: merchant.cred, body: { chainId: 31337 } });
    assert.equal(deposit.status, 201, deposit.text);
    const endpoint = await api.call('POST', `/admin/v1/apps/${merchant.cred.appId}/webhook-endpoints`, { url: 'http://127.0.0.1:9/fuzz', events: ['deposit.settled'] });
    assert.equal(endpoint.status, 201, JSON.stringify(endpoint.body));
    for (let i = 0; i < 2; i += 1) assert.equal((await createPayment(merchant)).status, 201);
    const page = await call('/v2/payments?limit=1', { credential: merchant.cred });
    f = {
      cred: merchant.cred,
      other: await newApp(),
      adminToken: ADMIN_TOKEN,
      accountId: merchant.accountId,
      externalUserId: account.body.account.externalUserId,
      walletId: account.body.connectedWallets[0].id,
      walletAddress: merchant.wallet,
      depositAddressId: deposit.body.depositAddress.id,
      endpointId: endpoint.body.endpoint.id,
      paymentsCursor: page.body.nextCursor,
      paymentId: '',
      clientToken: '',
      spareAccountId: (await call('/v2/accounts', { credential: merchant.cred, body: { externalUserId: `fuzz-spare-${process.pid}` } })).body.account.id,
      handle: account.body.paymentHandle.handle,
    };
    const acceptance = await call(`/v2/accounts/${merchant.accountId}/payment-acceptance`, { credential: merchant.cred, method: 'PUT', body: { publicReceiveEnabled: true, expectedVersion: 1 } });
    assert.equal(acceptance.status, 200, acceptance.text);
    // The merchant is the recipient of the fuzz's Payments, never their payer: the client token is another account's.
    const payer = await call('/v2/accounts', { credential: merchant.cred, body: { externalUserId: `fuzz-payer-${process.pid}` } });
    const token = await call('/v2/client/auth/exchange', { credential: merchant.cred, body: { accountId: payer.body.account.id } });
    assert.equal(token.status, 200, token.text);
    f.clientToken = token.body.accessToken;
    assert.ok(f.paymentsCursor, 'a second page of Payments');
  });
  after(() => api.close());

  test('every route the app serves has a fuzz model, and every model a route', () => {
    const served = listRoutes(api.app);
    assert.ok(served.length >= 30, `only ${served.length} routes found`);
    assert.deepEqual(served, Object.keys(ROUTE_MODELS).sort());
  });

  test('mutated requests to every endpoint: no 5xx, an answer within 5 s, the envelope on every 4xx, nothing created by a refusal, the resource still usable', async (t) => {
    const routes = Object.keys(ROUTE_MODELS);
    let keys = 0;
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fuzzCase(routes, f), async ({ route, mutations }) => {
        const model = ROUTE_MODELS[route as keyof typeof ROUTE_MODELS]!;
        if (model.touches === 'payment') {
          const created = await createPayment(merchant);
          assert.equal(created.status, 201, created.text);
          f.paymentId = created.body.payment.id;
        }
        const draft = mutations.reduce((d, m) => applyMutation(d, m, f), validDraft(route, model, f, `fuzz-idempotency-${process.pid}-${(keys += 1)}`));
        const req = toRequest(draft);
        // Node joins a repeated Idempotency-Key with ", ", and that is the key the service sees.
        const key = [req.headers['idempotency-key'] ?? []].flat().join(', ') || undefined;
        const before = await snapshot(f, key);
        const answer = await send(api.baseUrl, req);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);

        assert.ok(answer.status < 500, `${answer.status} to ${req.method} ${req.target.slice(0, 200)}: ${answer.text.slice(0, 300)}`);
        assert.ok(answer.headers.get('svc-version'), 'every response echoes Svc-Version');
        if (answer.status >= 400) {
          if (req.method !== 'HEAD') assertEnvelope(answer);
          assert.deepEqual(await snapshot(f, key), before, `a refused ${req.method} ${req.target.slice(0, 200)} changed rows`);
        }
        if (model.touches === 'payment') await assertPaymentUsable(f);
        if (model.touches === 'account') {
          const read = await call(`/v2/accounts/${f.accountId}`, { credential: f.cred });
          assert.equal(read.status, 200, read.text);
        }
      }),
      { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }), ...(PATH === undefined ? {} : { path: PATH }) },
    );
    t.diagnostic(`answers: ${[...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ')}`);
  });
});

/** The fuzz's findings, kept as examples: each was a 500, a bare answer or silently altered text. */
describe('Bad input the fuzz found', () => {
  const auth = (c: { appId: string; appSecret: string }) => basicAuth(c.appId, c.appSecret);

  test('a body nested 2,000 levels deep is 400 naming where it got too deep, not a stack overflow', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const deep = `{"externalUserId":"deep-1","metadata":${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}}`;
    const res = await send(h.baseUrl, { method: 'POST', target: '/v2/accounts', headers: { authorization: auth(cred), 'content-type': 'application/json' }, body: deep });
    assert.equal(res.status, 400, res.text);
    const { error } = JSON.parse(res.text) as { error: { code: string; details: { fields: Array<{ field: string }> } } };
    assert.equal(error.code, 'bad_request');
    assert.equal(error.details.fields[0]!.field, `body.metadata${'.a'.repeat(31)}`);
    assert.equal(await h.db.prisma.account.count({ where: { appId: cred.appId } }), 0);
  });

  test('requests Node refuses before the app (headers over 16 KiB, an unknown method) get the envelope and Svc-Version; a HEAD gets no body', async () => {
    const h = await getHarness();
    const big = await send(h.baseUrl, { method: 'GET', target: '/v2/partners/config', headers: { 'x-pad': 'x'.repeat(17_000) } });
    assert.equal(big.status, 431);
    assert.equal(big.headers.get('svc-version'), h.environments.apiVersion);
    assert.deepEqual(JSON.parse(big.text), { error: { code: 'headers_too_large', message: 'Request headers are too large' } });
    const head = await send(h.baseUrl, { method: 'HEAD', target: '/healthz', headers: { 'x-pad': 'x'.repeat(17_000) } });
    assert.equal(head.status, 431);
    assert.equal(head.text, '');
    const method = await send(h.baseUrl, { method: 'FOO', target: '/v2/accounts', headers: {} });
    assert.equal(method.status, 400);
    assert.equal((JSON.parse(method.text) as { error: { code: string } }).error.code, 'bad_request');
  });

  test('a body whose bytes are not UTF-8 is 400, not stored with U+FFFD in their place', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const body = Buffer.concat([Buffer.from('{"externalUserId":"bad-'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const res = await send(h.baseUrl, { method: 'POST', target: '/v2/accounts', headers: { authorization: auth(cred), 'content-type': 'application/json' }, body });
    assert.equal(res.status, 400, res.text);
    assert.equal((JSON.parse(res.text) as { error: { message: string } }).error.message, 'Request body is not valid UTF-8');
    assert.equal(await h.db.prisma.account.count({ where: { appId: cred.appId } }), 0);
  });
});
