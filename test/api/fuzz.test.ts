import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createHash, randomInt } from 'node:crypto';
import fc from 'fast-check';
import { ERROR_STATUS } from '../../src/domain/requests/errors';
import { basicAuth, call, newApp } from '../support/api-client';
import { getHarness } from '../support/harness';
import { until } from '../support/until';
import { createPayment, newMerchant, type Merchant } from '../support/fixtures';
import { startAdminApi, type AdminApi } from '../webhooks/support/admin';
import { listRoutes } from './fuzz/routes';
import { ROUTE_MODELS, type FuzzFixture } from './fuzz/models';
import { applyMutation, fuzzCase, toRequest, validDraft, type FuzzRequest } from './fuzz/requests';
import { COLUMNS_NOT_COMPARED, snapshotPlan, TABLES_NOT_COMPARED, takeSnapshot, type TablePlan } from './fuzz/snapshot';

/**
 * Every endpoint's body, path, query and headers, mutated as a buggy client would, against the real
 * app, PostgreSQL and Temporal. FUZZ_RUNS (default 150) sets how many requests. The seed is printed
 * as the file loads: FUZZ_SEED replays that run's cases (and FUZZ_PATH, which fast-check prints with
 * a failure, just the failing one). Without FUZZ_SEED each run picks its own.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const SEED = process.env.FUZZ_SEED === undefined ? randomInt(2 ** 31) : Number(process.env.FUZZ_SEED);
if (!Number.isSafeInteger(SEED)) throw new Error(`FUZZ_SEED must be an integer, got ${process.env.FUZZ_SEED}`);
/** With FUZZ_SEED, FUZZ_PATH (the `path` fast-check prints) replays just the failing case. */
const PATH = process.env.FUZZ_PATH;
console.log(`# fuzz: seed ${SEED}, ${RUNS} runs; replay with FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} TEST_FILTER=test/api/fuzz npm test`);
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
      const r = http.request(
        `${baseUrl}${req.target}`,
        { method: req.method, headers, agent: false, signal: AbortSignal.timeout(ANSWER_WITHIN_MS) },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const h = new Headers();
            for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
            resolve({ status: res.statusCode ?? 0, headers: h, text: Buffer.concat(chunks).toString('utf8') });
          });
        },
      );
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

/** The spec's error envelope, with a code from the one table (src/domain/requests/errors.ts) at its status. */
function assertEnvelope(answer: Answer): void {
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    assert.fail(`a ${answer.status} whose body is not JSON: ${answer.text.slice(0, 200)}`);
  }
  const error = (body as { error?: { code?: unknown; message?: unknown } }).error;
  assert.ok(error && typeof error === 'object', `a ${answer.status} without the error envelope: ${answer.text.slice(0, 200)}`);
  assert.deepEqual(
    Object.keys(error).filter((k) => !['code', 'message', 'details'].includes(k)),
    [],
  );
  assert.ok(typeof error.code === 'string' && error.code.length >= 1 && error.code.length <= 128, `code: ${String(error.code)}`);
  assert.ok(typeof error.message === 'string' && error.message.length >= 1 && error.message.length <= 1000, `message of ${error.code}`);
  assert.ok(Object.hasOwn(ERROR_STATUS, error.code), `code ${error.code} is not in the error table`);
  assert.equal(ERROR_STATUS[error.code as keyof typeof ERROR_STATUS], answer.status, `${error.code} answered with ${answer.status}`);
}

/**
 * Idempotency records of the request's own key are left out: a refusal stored under its key is how
 * the identical retry gets the identical refusal. The client API keeps an account's keys as
 * client:<accountId>:<key>, public creation as public<TAB>:<key>.
 */
const OWN_IDEMPOTENCY_KEY = `(t.key IS DISTINCT FROM $2::text
  AND ($2::text IS NULL OR (t.key NOT LIKE 'client:%' AND t.key NOT LIKE 'public' || chr(9) || ':%') OR right(t.key, length($2::text) + 1) <> ':' || $2::text))`;

/** What a request could create or change: every table (./fuzz/snapshot.ts), the fuzz's two apps' rows where tied to an app. */
async function snapshot(plan: TablePlan[], f: FuzzFixture, idempotencyKey: string | undefined): Promise<Record<string, unknown>> {
  const h = await getHarness();
  return takeSnapshot(h.db.pool, plan, [f.cred.appId, f.other.appId], {
    table: 'idempotency_records',
    where: OWN_IDEMPOTENCY_KEY,
    param: idempotencyKey ?? null,
  });
}

/**
 * Waits for what a successful request set going to land: a bank account the fuzz linked is verified
 * by the sandbox provider's callback a moment later, and that write must not fall between the two
 * snapshots of the next request.
 */
async function settled(f: FuzzFixture): Promise<void> {
  const h = await getHarness();
  await until(async (saw) => {
    const pending = await h.db.prisma.bankAccount.count({
      where: { appId: { in: [f.cred.appId, f.other.appId] }, status: 'pending_verification' },
    });
    saw(`${pending} bank accounts pending verification`);
    return pending === 0;
  }, "the fuzz's bank accounts verified");
}

/** The cases as data, the fixture's own values (ids, a cursor) named instead, so two runs compare. */
function casesDigest(cases: unknown[], f: FuzzFixture): string {
  let text = JSON.stringify(cases, (_k, v: unknown) =>
    v instanceof Uint8Array ? [...v] : typeof v === 'bigint' ? `${v}n` : Number.isNaN(v) ? 'NaN' : v,
  );
  for (const [name, value] of Object.entries(f))
    if (typeof value === 'string' && value.length > 3) text = text.split(value).join(`<${name}>`);
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
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
  assert.ok(
    cancel.status === 200 || (code && ERROR_STATUS[code as keyof typeof ERROR_STATUS] === 409),
    `cancel of the touched Payment: ${cancel.status} ${cancel.text}`,
  );
}

describe('Fuzzing every endpoint as a buggy client would call it', () => {
  let api: AdminApi;
  let merchant: Merchant;
  let f: FuzzFixture;
  let plan: TablePlan[];
  /** The cases the property ran, in order (the first RUNS: shrinking a failure runs more). */
  const ran: unknown[] = [];

  before(async () => {
    // The whole surface: partner, client and open routes, and the admin plane's (an admin operator's
    // token, with the resolve routes), on the shared harness. The console's HTML forms are the browser tests' to drive.
    api = await startAdminApi({ allowPrivate: true, withEngine: true, withOperator: true });
    merchant = await newMerchant();
    const account = await call(`/v2/accounts/${merchant.accountId}`, { credential: merchant.cred });
    const deposit = await call(`/v2/accounts/${merchant.accountId}/deposit-addresses`, {
      credential: merchant.cred,
      body: { chainId: 31337 },
    });
    assert.equal(deposit.status, 201, deposit.text);
    const endpoint = await api.call('POST', `/admin/v1/apps/${merchant.cred.appId}/webhook-endpoints`, {
      url: 'http://127.0.0.1:9/fuzz',
      events: ['deposit.settled'],
    });
    assert.equal(endpoint.status, 201, JSON.stringify(endpoint.body));
    for (let i = 0; i < 2; i += 1) assert.equal((await createPayment(merchant)).status, 201);
    const page = await call('/v2/payments?limit=1', { credential: merchant.cred });
    f = {
      cred: merchant.cred,
      other: await newApp(),
      adminToken: api.token,
      accountId: merchant.accountId,
      externalUserId: account.body.account.externalUserId,
      walletId: account.body.connectedWallets[0].id,
      walletAddress: merchant.wallet,
      depositAddressId: deposit.body.depositAddress.id,
      endpointId: endpoint.body.endpoint.id,
      paymentsCursor: page.body.nextCursor,
      paymentId: '',
      clientToken: '',
      spareAccountId: (await call('/v2/accounts', { credential: merchant.cred, body: { externalUserId: `fuzz-spare-${process.pid}` } }))
        .body.account.id,
      handle: account.body.paymentHandle.handle,
    };
    const acceptance = await call(`/v2/accounts/${merchant.accountId}/payment-acceptance`, {
      credential: merchant.cred,
      method: 'PUT',
      body: { publicReceiveEnabled: true, expectedVersion: 1 },
    });
    assert.equal(acceptance.status, 200, acceptance.text);
    // The merchant is the recipient of the fuzz's Payments, never their payer: the client token is another account's.
    const payer = await call('/v2/accounts', { credential: merchant.cred, body: { externalUserId: `fuzz-payer-${process.pid}` } });
    const token = await call('/v2/client/auth/exchange', { credential: merchant.cred, body: { accountId: payer.body.account.id } });
    assert.equal(token.status, 200, token.text);
    f.clientToken = token.body.accessToken;
    assert.ok(f.paymentsCursor, 'a second page of Payments');
    plan = await snapshotPlan((await getHarness()).db.pool);
  });
  after(() => api.close());

  test('every route the app serves has a fuzz model, and every model a route', () => {
    // The HTML areas (operator console, partner dashboard) take forms behind sessions: their own suites test them.
    const served = [...listRoutes(api.app), ...listRoutes(api.adminApp)]
      .sort()
      .filter((route) => !/^\/(console|dashboard)(\/|$)/.test(route.split(' ')[1]!));
    assert.ok(served.length >= 30, `only ${served.length} routes found`);
    assert.deepEqual(served, Object.keys(ROUTE_MODELS).sort());
  });

  test('mutated requests to every endpoint: no 5xx, an answer within 5 s, the envelope on every 4xx, nothing created by a refusal, the resource still usable', async (t) => {
    const routes = Object.keys(ROUTE_MODELS);
    let keys = 0;
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fuzzCase(routes, f), async (generated) => {
        if (ran.length < RUNS) ran.push(structuredClone(generated));
        const { route, mutations } = generated;
        const model = ROUTE_MODELS[route as keyof typeof ROUTE_MODELS]!;
        if (model.touches === 'payment') {
          const created = await createPayment(merchant);
          assert.equal(created.status, 201, created.text);
          f.paymentId = created.body.payment.id;
        }
        const draft = mutations.reduce(
          (d, m) => applyMutation(d, m, f),
          validDraft(route, model, f, `fuzz-idempotency-${process.pid}-${(keys += 1)}`),
        );
        const req = toRequest(draft);
        // Node joins a repeated Idempotency-Key with ", ", and that is the key the service sees.
        const key = [req.headers['idempotency-key'] ?? []].flat().join(', ') || undefined;
        await settled(f);
        const before = await snapshot(plan, f, key);
        // Admin routes live on the admin plane's listener, the rest on the partner port.
        const answer = await send(model.auth === 'admin' ? api.adminBaseUrl : api.baseUrl, req);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);

        assert.ok(answer.status < 500, `${answer.status} to ${req.method} ${req.target.slice(0, 200)}: ${answer.text.slice(0, 300)}`);
        assert.ok(answer.headers.get('svc-version'), 'every response echoes Svc-Version');
        if (answer.status >= 400) {
          if (req.method !== 'HEAD') assertEnvelope(answer);
          assert.deepEqual(await snapshot(plan, f, key), before, `a refused ${req.method} ${req.target.slice(0, 200)} changed rows`);
        }
        if (model.touches === 'payment') await assertPaymentUsable(f);
        if (model.touches === 'account') {
          const read = await call(`/v2/accounts/${f.accountId}`, { credential: f.cred });
          assert.equal(read.status, 200, read.text);
        }
      }),
      { numRuns: RUNS, seed: SEED, ...(PATH === undefined ? {} : { path: PATH }) },
    );
    t.diagnostic(
      `answers: ${[...statuses]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}×${n}`)
        .join(' ')}`,
    );
    t.diagnostic(`seed ${SEED}: ${ran.length} cases, digest ${casesDigest(ran, f)}`);
  });

  test('the printed seed replays the same cases', { skip: PATH !== undefined && 'FUZZ_PATH replays one case' }, () => {
    assert.equal(ran.length, RUNS, 'the fuzz ran first');
    const replayed = fc.sample(fuzzCase(Object.keys(ROUTE_MODELS), f), { seed: SEED, numRuns: RUNS });
    assert.deepEqual(structuredClone(replayed), ran);
  });

  test('what a refused request must leave as it was covers every table of the schema', async (t) => {
    const h = await getHarness();
    const { rows } = await h.db.pool.query<{ table: string }>(
      `SELECT table_name AS table FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`,
    );
    const tables = rows.map((r) => r.table);
    assert.deepEqual([...plan.map((p) => p.table), ...Object.keys(TABLES_NOT_COMPARED)].sort(), tables);
    // No exclusion outlives what it excludes.
    for (const [table, columns] of Object.entries(COLUMNS_NOT_COMPARED)) {
      const { rows: present } = await h.db.pool.query(
        `SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND column_name = ANY($2)`,
        [table, Object.keys(columns)],
      );
      assert.equal(present.length, Object.keys(columns).length, `${table}: ${Object.keys(columns).join(', ')}`);
    }
    // The tables a refused request of the fuzz's apps could write are compared on their rows.
    for (const table of [
      'accounts',
      'payments',
      'idempotency_records',
      'events',
      'ledger_entries',
      'webhook_deliveries',
      'vault_policies',
    ]) {
      assert.ok(plan.find((p) => p.table === table)?.where, `${table} is compared on the fuzz's apps' rows`);
    }
    t.diagnostic(
      `by app: ${plan
        .filter((p) => p.where)
        .map((p) => `${p.table} (${p.via})`)
        .join(', ')}`,
    );
    t.diagnostic(
      `whole: ${plan
        .filter((p) => !p.where)
        .map((p) => p.table)
        .join(', ')}`,
    );
  });
});

/** The fuzz's findings, kept as examples: each was a 500, a bare answer or silently altered text. */
describe('Bad input the fuzz found', () => {
  const auth = (c: { appId: string; appSecret: string }) => basicAuth(c.appId, c.appSecret);

  test('a body nested 2,000 levels deep is 400 naming where it got too deep, not a stack overflow', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const deep = `{"externalUserId":"deep-1","metadata":${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}}`;
    const res = await send(h.baseUrl, {
      method: 'POST',
      target: '/v2/accounts',
      headers: { authorization: auth(cred), 'content-type': 'application/json' },
      body: deep,
    });
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
    const res = await send(h.baseUrl, {
      method: 'POST',
      target: '/v2/accounts',
      headers: { authorization: auth(cred), 'content-type': 'application/json' },
      body,
    });
    assert.equal(res.status, 400, res.text);
    assert.equal((JSON.parse(res.text) as { error: { message: string } }).error.message, 'Request body is not valid UTF-8');
    assert.equal(await h.db.prisma.account.count({ where: { appId: cred.appId } }), 0);
  });
});
