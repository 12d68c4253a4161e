import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { call, newApp, uniqueUserId } from '../support/api-client';
import { getHarness } from '../support/harness';
import { newAccount, newMerchant, type Merchant } from '../support/fixtures';
import { until } from '../support/until';
import { sha256Hex } from '../../src/platform/secrets';
import { idempotencyRecords } from '../../src/domain/requests/idempotency-records';
import { resourceIdOf } from '../../src/domain/requests/idempotency-keys';
import type { AppCredential } from '../../src/domain/apps/apps';

/** GET /v2/idempotency-keys/{key}, the key percent-encoded as a partner's client sends it. */
const lookup = (cred: AppCredential, key: string) => call(`/v2/idempotency-keys/${encodeURIComponent(key)}`, { credential: cred });

let keys = 0;
const newKey = (what: string) => `${what}-${process.pid}-${(keys += 1)}`;

const paymentBody = (m: Merchant) =>
  JSON.stringify({
    intent: 'receive',
    amount: '10',
    assetCode: 'USDC',
    chainId: 31337,
    destination: { type: 'upa', accountId: m.accountId },
  });

const postPayment = (m: Merchant, key: string, rawBody: string) =>
  call('/v2/payments', {
    credential: m.cred,
    method: 'POST',
    rawBody,
    headers: { 'idempotency-key': key, 'content-type': 'application/json' },
  });

/** A claim as the middleware makes it for the app's own key: a request that holds it. */
async function claim(appId: string, key: string, rawBody: string) {
  const h = await getHarness();
  const path = '/v2/accounts';
  const requestHash = sha256Hex(Buffer.concat([Buffer.from(`POST ${path}\n`), Buffer.from(rawBody)]));
  const target = { appId, key, method: 'POST', path, requestHash, bodySha256: sha256Hex(rawBody), namespaced: false };
  const claimed = await idempotencyRecords(h.db.bookkeeping).claim(target);
  assert.ok(claimed, `claimed ${key}`);
}

describe('GET /v2/idempotency-keys/{key}', () => {
  test('a key no request used answers 200 unknown, with no request and no response', async () => {
    const cred = await newApp();
    const res = await lookup(cred, 'never-sent');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      object: 'idempotency_key',
      key: 'never-sent',
      status: 'unknown',
      request: null,
      response: null,
      createdAt: null,
      completedAt: null,
      releasedAt: null,
      lockExpiresAt: null,
    });
  });

  test('a create whose answer the partner never read (it gave up mid-request) is found completed, with the Payment id and the body digest', async () => {
    const m = await newMerchant();
    const h = await getHarness();
    const key = newKey('timed-out');
    const rawBody = paymentBody(m);
    // The partner's client times out once the service has the request: it never reads the answer.
    const abort = new AbortController();
    const sent = fetch(`${h.baseUrl}/v2/payments`, {
      method: 'POST',
      body: rawBody,
      signal: abort.signal,
      headers: {
        authorization: `Basic ${Buffer.from(`${m.cred.appId}:${m.cred.appSecret}`).toString('base64')}`,
        'content-type': 'application/json',
        'idempotency-key': key,
      },
    }).catch((err: Error) => err);
    await until(
      async () => (await h.db.prisma.idempotencyRecord.findUnique({ where: { appId_key: { appId: m.cred.appId, key } } })) !== null,
      'the service to claim the key',
    );
    abort.abort();
    await sent;

    const found = await until(async (saw) => {
      const res = await lookup(m.cred, key);
      saw(res.body);
      return res.body.status === 'completed' ? res : undefined;
    }, 'the lookup to answer completed');
    const payment = await h.db.prisma.payment.findFirstOrThrow({ where: { appId: m.cred.appId } });
    assert.deepEqual(found.body.request, { method: 'POST', path: '/v2/payments', bodySha256: sha256Hex(rawBody) });
    assert.deepEqual(found.body.response, { status: 201, resourceId: payment.id });
    assert.ok(Date.parse(found.body.completedAt) >= Date.parse(found.body.createdAt), found.text);
    assert.equal(found.body.releasedAt, null);
    assert.equal(found.body.lockExpiresAt, null);
    // Knowing that, the partner reads the Payment instead of retrying; the identical retry would replay it.
    const replay = await postPayment(m, key, rawBody);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.body.payment.id, payment.id);
  });

  test('a request refused before it ran leaves its key released; the corrected request then runs under it', async () => {
    const m = await newMerchant();
    const key = newKey('refused');
    const bad = JSON.stringify({
      intent: 'receive',
      amount: '10.0000001',
      assetCode: 'USDC',
      chainId: 31337,
      destination: { type: 'upa', accountId: m.accountId },
    });
    const refused = await postPayment(m, key, bad);
    assert.equal(refused.status, 400, refused.text);

    const released = await lookup(m.cred, key);
    assert.equal(released.body.status, 'released', released.text);
    assert.deepEqual(released.body.request, { method: 'POST', path: '/v2/payments', bodySha256: sha256Hex(bad) });
    assert.equal(released.body.response, null);
    assert.equal(typeof released.body.releasedAt, 'string');
    assert.equal(released.body.completedAt, null);

    const good = paymentBody(m);
    const ran = await postPayment(m, key, good);
    assert.equal(ran.status, 201, ran.text);
    assert.equal(ran.headers.get('idempotent-replayed'), null);
    const completed = await lookup(m.cred, key);
    assert.equal(completed.body.status, 'completed', completed.text);
    assert.deepEqual(completed.body.request, { method: 'POST', path: '/v2/payments', bodySha256: sha256Hex(good) });
    assert.deepEqual(completed.body.response, { status: 201, resourceId: ran.body.payment.id });
    assert.equal(completed.body.releasedAt, null);
  });

  test('a 404 releases the key too, and another target may then take it', async () => {
    const m = await newMerchant();
    const key = newKey('not-found');
    const missing = await call('/v2/accounts/acct_doesnotexist0000/deposit-addresses', {
      credential: m.cred,
      body: { chainId: 31337 },
      headers: { 'idempotency-key': key },
    });
    assert.equal(missing.status, 404, missing.text);
    assert.equal((await lookup(m.cred, key)).body.status, 'released');
    const account = await call('/v2/accounts', {
      credential: m.cred,
      body: { externalUserId: uniqueUserId('after-404') },
      headers: { 'idempotency-key': key },
    });
    assert.equal(account.status, 201, account.text);
    const found = await lookup(m.cred, key);
    assert.equal(found.body.request.path, '/v2/accounts');
    assert.deepEqual(found.body.response, { status: 201, resourceId: account.body.account.id });
  });

  test('a stored refusal is completed with its status and no resource id', async () => {
    const cred = await newApp();
    const body = { externalUserId: uniqueUserId('taken') };
    assert.equal((await call('/v2/accounts', { credential: cred, body })).status, 201);
    const key = newKey('taken');
    const refused = await call('/v2/accounts', { credential: cred, body, headers: { 'idempotency-key': key } });
    assert.equal(refused.status, 409, refused.text);
    const found = await lookup(cred, key);
    assert.equal(found.body.status, 'completed');
    assert.deepEqual(found.body.response, { status: 409, resourceId: null });
  });

  test('a key a request still holds is in_flight until its lock expires, and the identical request is told so', async () => {
    const cred = await newApp();
    const key = newKey('held');
    const rawBody = JSON.stringify({ externalUserId: uniqueUserId('held') });
    const before = Date.now();
    await claim(cred.appId, key, rawBody);
    const held = await lookup(cred, key);
    assert.equal(held.body.status, 'in_flight', held.text);
    assert.deepEqual(held.body.request, { method: 'POST', path: '/v2/accounts', bodySha256: sha256Hex(rawBody) });
    assert.equal(held.body.response, null);
    const expires = Date.parse(held.body.lockExpiresAt);
    assert.ok(expires >= before + 59_000 && expires <= Date.now() + 60_000, held.text);
    const same = await call('/v2/accounts', {
      credential: cred,
      rawBody,
      headers: { 'idempotency-key': key, 'content-type': 'application/json' },
    });
    assert.equal(same.status, 409, same.text);
    assert.equal(same.body.error.code, 'request_in_progress');

    // Its holder died: the lock runs out, the key still answers in_flight (past lockExpiresAt), and the identical request takes it over.
    const h = await getHarness();
    const past = new Date(Date.now() - 1000);
    await h.db.prisma.idempotencyRecord.update({ where: { appId_key: { appId: cred.appId, key } }, data: { lockedUntil: past } });
    const orphaned = await lookup(cred, key);
    assert.equal(orphaned.body.status, 'in_flight');
    assert.equal(orphaned.body.lockExpiresAt, past.toISOString());
    const taken = await call('/v2/accounts', {
      credential: cred,
      rawBody,
      headers: { 'idempotency-key': key, 'content-type': 'application/json' },
    });
    assert.equal(taken.status, 201, taken.text);
    assert.equal((await lookup(cred, key)).body.status, 'completed');
  });

  test("another app's key answers unknown, and never what that app's request was", async () => {
    const a = await newApp();
    const b = await newApp();
    const key = newKey('theirs');
    const created = await call('/v2/accounts', {
      credential: a,
      body: { externalUserId: uniqueUserId('a') },
      headers: { 'idempotency-key': key },
    });
    assert.equal(created.status, 201);
    assert.equal((await lookup(a, key)).body.status, 'completed');
    const other = await lookup(b, key);
    assert.equal(other.status, 200);
    assert.equal(other.body.status, 'unknown');
    assert.equal(other.body.request, null);
  });

  test("a client API account's key (kept in the account's namespace) is not the app's: neither the key nor its stored form is found", async () => {
    const m = await newMerchant();
    const h = await getHarness();
    const created = await call('/v2/payments', {
      credential: m.cred,
      headers: { 'idempotency-key': newKey('pay') },
      body: JSON.parse(paymentBody(m)),
    });
    const p = created.body;
    const payer = await newAccount(m.cred);
    const token = (await call('/v2/client/auth/exchange', { credential: m.cred, body: { accountId: payer } })).body.accessToken as string;
    const read = await call(`/v2/client/me/payments/${p.payment.id}`, {
      headers: { authorization: `Bearer ${token}`, 'x-svc-payment-secret': p.checkout.clientSecret },
    });
    const key = newKey('confirm');
    const confirm = await call(`/v2/client/me/payments/${p.payment.id}/confirm`, {
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': key },
      body: { actionId: read.body.options[0].execution.actionId, proof: { type: 'managed_authorization', authorization: 'approved' } },
    });
    assert.equal(confirm.status, 400, confirm.text);
    const stored = `client:${payer}:${key}`;
    const record = await h.db.prisma.idempotencyRecord.findUniqueOrThrow({ where: { appId_key: { appId: m.cred.appId, key: stored } } });
    assert.equal(record.state, 'completed', 'the refusal is stored under the namespaced key');
    assert.equal(record.namespaced, true);
    for (const asked of [key, stored]) {
      const res = await lookup(m.cred, asked);
      assert.equal(res.body.status, 'unknown', `${asked}: ${res.text}`);
    }
  });

  test('the path key is validated as the header is: 400 naming path.key for an overlong, NUL, tab or non-ASCII key', async () => {
    const cred = await newApp();
    for (const [what, path] of [
      ['257 characters', 'k'.repeat(257)],
      ['a NUL', 'order%001'],
      ['a tab', 'order%091'],
      ['a Latin-1 letter', 'caf%C3%A9-1'],
      ['invalid UTF-8', 'caf%E9-1'],
    ]) {
      const res = await call(`/v2/idempotency-keys/${path}`, { credential: cred });
      assert.equal(res.status, 400, `${what}: ${res.text}`);
      assert.equal(res.body.error.code, 'bad_request', what);
      assert.deepEqual(
        res.body.error.details.fields.map((f: { field: string }) => f.field),
        ['path.key'],
        what,
      );
    }
    assert.equal((await call('/v2/idempotency-keys/k', {})).status, 401, 'a credential is required');
  });

  test('any printable ASCII key round-trips percent-encoded: the lookup answers it, and finds it once used', async () => {
    const cred = await newApp();
    // "." and ".." are path segments a URL parser removes (RFC 3986 dot segments): not a key a URL can name.
    const printable = fc.string({
      unit: fc.constantFrom(...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))),
      minLength: 1,
      maxLength: 256,
    });
    await fc.assert(
      fc.asyncProperty(
        printable.filter((k) => k !== '.' && k !== '..'),
        async (key) => {
          const res = await lookup(cred, key);
          assert.equal(res.status, 200, `${JSON.stringify(key)}: ${res.text}`);
          assert.equal(res.body.key, key);
        },
      ),
      { numRuns: 40 },
    );
    const awkward = 'order 4711/retry?x=1#%zz';
    const created = await call('/v2/accounts', {
      credential: cred,
      body: { externalUserId: uniqueUserId('awkward') },
      headers: { 'idempotency-key': awkward },
    });
    assert.equal(created.status, 201, created.text);
    const found = await lookup(cred, awkward);
    assert.equal(found.body.status, 'completed', found.text);
    assert.equal(found.body.response.resourceId, created.body.account.id);
  });

  test("the resource id is the answer's top-level id, else its first top-level object's id, else null", () => {
    assert.equal(resourceIdOf({ id: 'acct_1', account: { id: 'acct_2' } }), 'acct_1');
    assert.equal(resourceIdOf({ payment: { id: 'payment_1' }, nextAction: { type: 'x' } }), 'payment_1');
    assert.equal(resourceIdOf({ nextAction: { type: 'x' }, refund: { id: 'ret_1' } }), 'ret_1');
    assert.equal(resourceIdOf({ error: { code: 'conflict', message: 'm' } }), null);
    assert.equal(resourceIdOf({ items: [{ id: 'x' }] }), null);
    assert.equal(resourceIdOf(null), null);
  });
});
