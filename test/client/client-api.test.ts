import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import fc from 'fast-check';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import type { Address, Hash } from 'viem';
import { createApi } from '../../src/http/app';
import { createLogger } from '../../src/logger';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { clientTokenKey, CLIENT_TOKEN_LIFETIME_SECONDS } from '../../src/domain/client-auth/access-tokens';
import { ZClientTokenResponse, ZClientTokenRevokeResponse } from '../../src/domain/client-auth/client-auth.schemas';
import { ZClientConfirmResponse, ZClientPaymentResponse } from '../../src/domain/payments/client-payment.schemas';
import { paymentOptionId, walletTransferOption, type PaymentOptionProvider } from '../../src/domain/payments/payment-options';
import { issueAction } from '../../src/domain/payments/payment-actions';
import { deriveKey } from '../../src/platform/secrets';
import type { AppCredential } from '../../src/domain/apps/apps';
import { call, newApp, uniqueUserId, type ApiResponse } from '../support/api-client';
import { apiDepsOnHarness, getHarness, TEST_SERVICE_SECRET } from '../support/harness';
import { eventually, newPayer, sendOnHeldChain, type PendingTx } from '../support/chain';
import { until } from '../support/until';
import { newMerchant, type Merchant, newAccount, newPayment } from '../support/fixtures';

/**
 * The client API on an API of its own whose every log line is kept: the last test greps them (and
 * the stored idempotent responses and events) for every token and payment secret this file saw.
 */
const lines: string[] = [];
const issued = new Set<string>();
let server: Server;
let baseUrl: string;

before(async () => {
  const h = await getHarness();
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      cb();
    },
  });
  const api = createApi(
    await apiDepsOnHarness({
      logger: createLogger('debug', stream),
      engine: h.engine,
      chains: h.chain.chains,
      client: { engine: h.engine },
    }),
  );
  server = await new Promise<Server>((resolve) => {
    const s = api.listen(0, '127.0.0.1', () => resolve(s));
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const key = () => clientTokenKey(TEST_SERVICE_SECRET);

async function exchange(cred: AppCredential, body: unknown): Promise<ApiResponse> {
  const res = await call('/v2/client/auth/exchange', { credential: cred, body, baseUrl });
  if (res.body?.accessToken) issued.add(res.body.accessToken);
  return res;
}

async function tokenFor(cred: AppCredential, accountId: string): Promise<string> {
  const res = await exchange(cred, { accountId });
  assert.equal(res.status, 200, res.text);
  return res.body.accessToken as string;
}

function bearer(token: string, extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${token}`, ...extra };
}

async function readAsClient(token: string, paymentId: string, secret: string | undefined, path = '') {
  return call(`/v2/client/me/payments/${paymentId}${path}`, {
    baseUrl,
    headers: bearer(token, secret === undefined ? {} : { 'x-svc-payment-secret': secret }),
  });
}

async function confirm(token: string, paymentId: string, body: unknown, headers: Record<string, string> = {}) {
  return call(`/v2/client/me/payments/${paymentId}/confirm`, { baseUrl, headers: bearer(token, headers), body });
}

function assertUnauthorized(res: ApiResponse, what: string): void {
  assert.equal(res.status, 401, `${what}: ${res.text}`);
  assert.equal(res.body.error.code, 'unauthorized', what);
  assert.equal(typeof res.body.error.message, 'string');
}

async function newPaymentFor(m: Merchant, overrides: Record<string, unknown> = {}) {
  const created = await newPayment(m, overrides);
  issued.add(created.secret);
  return created;
}

/** A token transfer the scanner is not told about: only a confirm can make the service look at it. */
async function sendUnannounced(to: string, amountAtomic: bigint, from?: Awaited<ReturnType<typeof newPayer>>): Promise<Hash> {
  const h = await getHarness();
  const chain = h.chain.chains.get(h.chainId);
  const payer = from ?? (await newPayer(amountAtomic));
  const txHash = await chain.sendTokenTransfer({ from: payer, token: SANDBOX_TOKEN_ADDRESS, to: to as Address, amountAtomic });
  await until(async () => (await chain.getTransactionStatus(txHash, 1)) === 'confirmed', `${txHash} mined`);
  return txHash;
}

async function craft(
  claims: Record<string, unknown>,
  opts: { key?: Uint8Array; iat?: number; exp?: number; alg?: string } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({ gen: 0, ...claims })
    .setProtectedHeader({ alg: opts.alg ?? 'HS256', typ: 'JWT' })
    .setIssuer('partner-payments')
    .setAudience((claims.aud as string | undefined) ?? 'client-api')
    .setJti('ctok_crafted')
    .setIssuedAt(opts.iat ?? now)
    .setExpirationTime(opts.exp ?? now + 600)
    .sign(opts.key ?? key());
  issued.add(token);
  return token;
}

describe('Client API: token exchange', () => {
  test('exchanges app credentials for a 15-minute HS256 Bearer token bound to the app, environment and account', async () => {
    const m = await newMerchant();
    const ext = uniqueUserId('payer');
    const created = await call('/v2/accounts', { credential: m.cred, body: { externalUserId: ext } });
    const accountId = created.body.account.id as string;
    const before = Date.now();
    const byId = await exchange(m.cred, { accountId });
    assert.equal(byId.status, 200, byId.text);
    ZClientTokenResponse.parse(byId.body);
    assert.equal(byId.body.tokenType, 'Bearer');
    assert.equal(byId.body.expiresIn, 900);
    assert.equal(CLIENT_TOKEN_LIFETIME_SECONDS, 900);
    assert.equal(byId.body.accountId, accountId);
    assert.equal(byId.headers.get('cache-control'), 'no-store');
    const expiresAt = Date.parse(byId.body.expiresAt);
    assert.ok(expiresAt >= Math.floor(before / 1000) * 1000 + 899_000 && expiresAt <= Date.now() + 900_000, byId.body.expiresAt);
    assert.equal(decodeProtectedHeader(byId.body.accessToken).alg, 'HS256');
    const claims = decodeJwt(byId.body.accessToken);
    assert.equal(claims.sub, accountId);
    assert.equal(claims.app, m.cred.appId);
    assert.equal(claims.env, 'sandbox');
    assert.equal(claims.aud, 'client-api');
    assert.equal(claims.exp! - claims.iat!, 900);
    assert.match(String(claims.jti), /^ctok_[A-Za-z0-9]{22}$/);

    const byExternal = await exchange(m.cred, { externalUserId: ext });
    assert.equal(byExternal.status, 200, byExternal.text);
    assert.equal(byExternal.body.accountId, accountId);
    assert.notEqual(decodeJwt(byExternal.body.accessToken).jti, claims.jti, 'each exchange issues a new token');
  });

  test('refuses an exchange body that is not exactly one of accountId and externalUserId', async () => {
    const m = await newMerchant();
    const other = await newMerchant();
    const ext = uniqueUserId('payer');
    const accountId = (await call('/v2/accounts', { credential: m.cred, body: { externalUserId: ext } })).body.account.id as string;
    for (const body of [
      {},
      { accountId, externalUserId: ext },
      { accountId, extra: 1 },
      { accountId: 7 },
      { accountId: 'user_1' },
      { externalUserId: '' },
      { externalUserId: 'x'.repeat(129) },
      { externalUserId: 'a\u0000b' },
      [],
    ]) {
      const res = await exchange(m.cred, body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.body.error.code, 'bad_request');
    }
    const raw = await call('/v2/client/auth/exchange', {
      credential: m.cred,
      rawBody: '{"accountId":"acct_\\u0000x"}',
      headers: { 'content-type': 'application/json' },
      baseUrl,
    });
    assert.equal(raw.status, 400, raw.text);
    // Another app's account, and an unknown user: not found, and no token.
    const foreign = await exchange(other.cred, { accountId });
    assert.equal(foreign.status, 404, foreign.text);
    assert.equal(foreign.body.error.code, 'not_found');
    const unknown = await exchange(m.cred, { externalUserId: uniqueUserId('nobody') });
    assert.equal(unknown.status, 404);
  });

  test('the exchange takes only HTTP Basic app credentials with the v2:payments scope', async () => {
    const m = await newMerchant();
    const token = await tokenFor(m.cred, m.accountId);
    const none = await call('/v2/client/auth/exchange', { body: { accountId: m.accountId }, baseUrl });
    assertUnauthorized(none, 'no credential');
    const withBearer = await call('/v2/client/auth/exchange', { body: { accountId: m.accountId }, headers: bearer(token), baseUrl });
    assertUnauthorized(withBearer, 'a client token');
    const noScope = await newApp({ scopes: ['v2:accounts'] });
    const acct = await newAccount(noScope);
    const forbidden = await exchange(noScope, { accountId: acct });
    assert.equal(forbidden.status, 403, forbidden.text);
    assert.equal(forbidden.body.error.code, 'forbidden');
  });

  test('a client token is refused on partner routes', async () => {
    const m = await newMerchant();
    const token = await tokenFor(m.cred, m.accountId);
    const p = await newPaymentFor(m);
    for (const path of ['/v2/partners/config', `/v2/payments/${p.payment.id}`, `/v2/accounts/${m.accountId}`]) {
      assertUnauthorized(await call(path, { headers: bearer(token), baseUrl }), path);
    }
  });
});

describe('Client API: bearer tokens', () => {
  test('refuses missing, malformed, expired, wrongly signed, foreign-environment and other-audience tokens with 401 in the envelope', async () => {
    const m = await newMerchant();
    const p = await newPaymentFor(m);
    const payer = await newAccount(m.cred);
    const good = await tokenFor(m.cred, payer);
    const now = Math.floor(Date.now() / 1000);
    const base = { sub: payer, app: m.cred.appId, env: 'sandbox' };
    // The crafting itself is right: the same claims under the service's key are accepted.
    const crafted = await craft(base);
    assert.equal((await readAsClient(crafted, p.payment.id, p.checkout.clientSecret)).status, 200);
    const cases: Array<[string, Record<string, string>]> = [
      ['no header', {}],
      ['empty bearer', { authorization: 'Bearer ' }],
      ['not a JWT', { authorization: 'Bearer abc.def' }],
      ['Basic app credentials', { authorization: `Basic ${Buffer.from(`${m.cred.appId}:${m.cred.appSecret}`).toString('base64')}` }],
      ['token without scheme', { authorization: good }],
      ['expired', bearer(await craft(base, { iat: now - 1000, exp: now - 100 }))],
      ['another key', bearer(await craft(base, { key: deriveKey(TEST_SERVICE_SECRET, 'client-access-token:v2') }))],
      ['the clientSecret key label', bearer(await craft(base, { key: deriveKey('another-service-secret', 'client-access-token:v1') }))],
      ['foreign environment', bearer(await craft({ ...base, env: 'production' }))],
      ['another audience', bearer(await craft({ ...base, aud: 'partner-api' }))],
      ['another app', bearer(await craft({ ...base, app: (await newApp()).appId }))],
      ['an account of another app', bearer(await craft({ ...base, sub: (await newMerchant()).accountId }))],
      ['unknown claim', bearer(await craft({ ...base, admin: true }))],
      ['HS512', bearer(await craft(base, { alg: 'HS512' }))],
      ['alg none', bearer(`${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${good.split('.')[1]}.`)],
      ['signature stripped', bearer(good.split('.').slice(0, 2).join('.') + '.')],
      ['NUL in token', { authorization: `Bearer ${good.slice(0, 10)}\u0000${good.slice(11)}`.replace('\u0000', '%00') }],
    ];
    for (const [what, headers] of cases) {
      const res = await call(`/v2/client/me/payments/${p.payment.id}`, {
        baseUrl,
        headers: { ...headers, 'x-svc-payment-secret': p.checkout.clientSecret },
      });
      assertUnauthorized(res, what);
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer /, what);
      assert.equal(res.text.includes(p.checkout.clientSecret), false, what);
    }
    const confirmNoAuth = await call(`/v2/client/me/payments/${p.payment.id}/confirm`, {
      baseUrl,
      body: { actionId: 'x', proof: { type: 'transaction', transactionHash: `0x${'1'.repeat(64)}` } },
    });
    assertUnauthorized(confirmNoAuth, 'confirm without a token');
  });

  test("revoking an account's tokens refuses every token issued before; a new exchange works, other accounts are untouched", async () => {
    const m = await newMerchant();
    const p = await newPaymentFor(m);
    const payer = await newAccount(m.cred);
    const old = await tokenFor(m.cred, payer);
    // Another account, the payer of a Payment of its own.
    const q = await newPaymentFor(m);
    const bystander = await tokenFor(m.cred, await newAccount(m.cred));
    assert.equal((await readAsClient(old, p.payment.id, p.checkout.clientSecret)).status, 200);
    assert.equal((await readAsClient(bystander, q.payment.id, q.checkout.clientSecret)).status, 200);
    const revoked = await call('/v2/client/auth/revoke', { credential: m.cred, body: { accountId: payer }, baseUrl });
    assert.equal(revoked.status, 200, revoked.text);
    ZClientTokenRevokeResponse.parse(revoked.body);
    assertUnauthorized(await readAsClient(old, p.payment.id, p.checkout.clientSecret), 'revoked token');
    assert.equal((await readAsClient(bystander, q.payment.id, q.checkout.clientSecret)).status, 200);
    const fresh = await tokenFor(m.cred, payer);
    assert.equal((await readAsClient(fresh, p.payment.id, p.checkout.clientSecret)).status, 200);
    const h = await getHarness();
    assert.equal((await h.db.prisma.clientTokenGeneration.findUniqueOrThrow({ where: { accountId: payer } })).generation, 1);
    const foreign = await call('/v2/client/auth/revoke', { credential: (await newMerchant()).cred, body: { accountId: payer }, baseUrl });
    assert.equal(foreign.status, 404);
  });

  test('a token altered in any one character is refused with 401 (property)', async () => {
    const m = await newMerchant();
    const p = await newPaymentFor(m);
    const token = await tokenFor(m.cred, m.accountId);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: token.length - 1 }), fc.constantFrom(...alphabet.split('')), async (at, ch) => {
        fc.pre(token[at] !== ch);
        const altered = `${token.slice(0, at)}${ch}${token.slice(at + 1)}`;
        issued.add(altered);
        const res = await readAsClient(altered, p.payment.id, p.checkout.clientSecret);
        assert.equal(res.status, 401, `${at}:${ch} ${res.text}`);
      }),
      { numRuns: 60 },
    );
    // Every last-character variant of the signature, including the ones that only differ in padding bits.
    for (const ch of alphabet.slice(0, 64)) {
      if (ch === token[token.length - 1]) continue;
      const altered = `${token.slice(0, -1)}${ch}`;
      assert.equal((await readAsClient(altered, p.payment.id, p.checkout.clientSecret)).status, 401, ch);
    }
  });
});

describe('Client API: reading a Payment', () => {
  test('answers the Payment, its checkout, next action and the direct wallet-transfer option with a stored single-use action id', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = await newPaymentFor(m, { amount: '12.5' });
    const payer = await newAccount(m.cred);
    const token = await tokenFor(m.cred, payer);
    const res = await readAsClient(token, p.payment.id, p.checkout.clientSecret);
    assert.equal(res.status, 200, res.text);
    ZClientPaymentResponse.parse(res.body);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.deepEqual(res.body.payment, p.payment);
    assert.deepEqual(res.body.nextAction, p.nextAction);
    assert.equal(res.body.checkout.clientSecret, p.checkout.clientSecret);
    assert.equal(res.body.options.length, 1);
    const option = res.body.options[0];
    assert.equal(option.id, paymentOptionId(TEST_SERVICE_SECRET, p.payment.id, 'wallet_transfer'));
    assert.match(option.id, /^pay_option_[A-Za-z0-9_-]+$/);
    assert.equal(option.paymentMethodType, 'wallet_transfer');
    assert.equal(option.status, 'available');
    assert.equal(option.requiredAmountAtomic, '12500000');
    assert.equal(option.paidAmountAtomic, '0');
    assert.equal(option.remainingAmountAtomic, '12500000');
    assert.equal(option.isTerminal, false);
    assert.deepEqual(option.payerAmount, {
      amountAtomic: '12500000',
      amountDecimal: '12.5',
      assetSymbol: 'USDC',
      decimals: 6,
      chainId: 31337,
      tokenAddress: SANDBOX_TOKEN_ADDRESS,
    });
    assert.equal(option.recipientAmount.amountAtomic, p.payment.fees.merchantNetAmountAtomic);
    assert.equal(option.execution.type, 'transaction');
    assert.equal(option.actionExpiresAt, p.payment.expiresAt);
    assert.deepEqual(option.transactionSubmissions, []);
    assert.deepEqual(option.receipts, []);
    const row = await h.db.prisma.paymentAction.findUniqueOrThrow({ where: { id: option.execution.actionId } });
    assert.deepEqual([row.paymentId, row.accountId, row.optionId, row.usedAt], [p.payment.id, payer, option.id, null]);
    // A second read shows the same live action. The Payment is now this payer's: another account is
    // answered as for an unknown Payment (payer-binding.test.ts), and is issued nothing.
    const again = await readAsClient(token, p.payment.id, p.checkout.clientSecret);
    assert.equal(again.body.options[0].execution.actionId, option.execution.actionId);
    const other = await readAsClient(await tokenFor(m.cred, await newAccount(m.cred)), p.payment.id, p.checkout.clientSecret);
    assert.equal(other.status, 404, other.text);
    assert.equal(await h.db.prisma.paymentAction.count({ where: { paymentId: p.payment.id } }), 1);
  });

  test("needs the Payment's own secret (401 otherwise, before any read) and a Payment of the token's app (404 otherwise)", async () => {
    const m = await newMerchant();
    const p = await newPaymentFor(m);
    const q = await newPaymentFor(m);
    const token = await tokenFor(m.cred, m.accountId);
    assertUnauthorized(await readAsClient(token, p.payment.id, undefined), 'no secret');
    assertUnauthorized(await readAsClient(token, p.payment.id, q.checkout.clientSecret), "another Payment's secret");
    assertUnauthorized(
      await readAsClient(token, p.payment.id, p.checkout.clientSecret.slice(0, -1) + (p.checkout.clientSecret.endsWith('0') ? '1' : '0')),
      'one digit off',
    );
    assertUnauthorized(await readAsClient(token, p.payment.id, p.checkout.clientSecret.toUpperCase()), 'upper case');
    // An unknown Payment with its (derivable) right secret is simply not found.
    const other = await newMerchant();
    const foreignToken = await tokenFor(other.cred, other.accountId);
    const foreign = await readAsClient(foreignToken, p.payment.id, p.checkout.clientSecret);
    assert.equal(foreign.status, 404, foreign.text);
    assert.equal(foreign.body.error.code, 'not_found');
    assert.equal(foreign.text.includes(p.checkout.clientSecret), false);
    // The secret belongs in its header, never in the URL: any query is refused.
    const inQuery = await call(`/v2/client/me/payments/${p.payment.id}?paymentSecret=x`, {
      baseUrl,
      headers: bearer(token, { 'x-svc-payment-secret': p.checkout.clientSecret }),
    });
    assert.equal(inQuery.status, 400, inQuery.text);
  });

  test('refuses malformed Payment ids and NUL characters with 400, and other methods with 405', async () => {
    const m = await newMerchant();
    const token = await tokenFor(m.cred, m.accountId);
    for (const [method, path] of [
      ['DELETE', '/v2/client/me/payments/payment_x'],
      ['GET', '/v2/client/me/payments/payment_x/confirm'],
      ['GET', '/v2/client/auth/exchange'],
    ] as const) {
      const res = await call(path, { baseUrl, method, headers: bearer(token) });
      assert.equal(res.status, 405, `${method} ${path}: ${res.text}`);
      assert.equal(res.body.error.code, 'method_not_allowed');
    }
    for (const id of ['payment_a%00b', 'pay_123', 'payment_', `payment_${'a'.repeat(80)}`, 'payment_a%20b']) {
      const res = await readAsClient(token, id, 'payment_x_secret_' + '0'.repeat(40));
      assert.equal(res.status, 400, `${id}: ${res.text}`);
      assert.equal(res.body.error.code, 'bad_request');
      const c = await confirm(token, id, { actionId: 'a', proof: { type: 'transaction', transactionHash: `0x${'1'.repeat(64)}` } });
      assert.equal(c.status, 400, `${id}: ${c.text}`);
    }
  });
});

describe('Client API: confirming a Payment', () => {
  test('verifies a transaction proof at once, answers the current Payment, and uses the action id once', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = await newPaymentFor(m, { amount: '10' });
    const payer = await newAccount(m.cred);
    const token = await tokenFor(m.cred, payer);
    const read = await readAsClient(token, p.payment.id, p.checkout.clientSecret);
    const actionId = read.body.options[0].execution.actionId as string;
    const txHash = await sendUnannounced(p.payment.funding.depositAddress.address, 10_000_000n);
    const body = { actionId, proof: { type: 'transaction', transactionHash: txHash }, metadata: { orderId: 'A-1', nested: { ok: true } } };
    const res = await confirm(token, p.payment.id, body, { 'idempotency-key': 'confirm-1' });
    assert.equal(res.status, 200, res.text);
    ZClientConfirmResponse.parse(res.body);
    assert.equal(res.body.payment.id, p.payment.id);
    assert.equal(res.body.checkout.clientSecret, p.checkout.clientSecret);
    // Recorded by the confirm itself: the scanner was not poked since the transfer.
    const transfer = await h.db.prisma.paymentTransfer.findFirst({ where: { paymentId: p.payment.id, txHash: txHash.toLowerCase() } });
    assert.ok(transfer, 'the confirm recorded the transfer');
    const action = await h.db.prisma.paymentAction.findUniqueOrThrow({ where: { id: actionId } });
    assert.ok(action.usedAt);
    assert.deepEqual(action.metadata, body.metadata);
    assert.deepEqual(action.proof, body.proof);

    // Same key, same body: the same answer, clientSecret included, though the stored copy has none.
    const replay = await confirm(token, p.payment.id, body, { 'idempotency-key': 'confirm-1' });
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.text, res.text);
    const records = await h.db.prisma.idempotencyRecord.findMany({ where: { appId: m.cred.appId, key: { endsWith: ':confirm-1' } } });
    assert.equal(records.length, 1);
    assert.equal(records[0]!.key, `client:${payer}:confirm-1`);
    assert.equal(records[0]!.responseBody!.includes(p.checkout.clientSecret), false);
    // Another account of the app with the same key and body is not served the first account's answer.
    const otherToken = await tokenFor(m.cred, await newAccount(m.cred));
    const otherTry = await confirm(otherToken, p.payment.id, body, { 'idempotency-key': 'confirm-1' });
    assert.equal(otherTry.status, 404, otherTry.text);
    // Without the key, the used action is refused.
    const reused = await confirm(token, p.payment.id, body);
    assert.equal(reused.status, 409, reused.text);
    assert.equal(reused.body.error.details.reasonCode, 'action_already_used');

    // The workflow counts it: the Payment moves on, and the option shows the transfer.
    const settled = await eventually(async () => {
      const r = await readAsClient(token, p.payment.id, p.checkout.clientSecret);
      return r.body.payment.status === 'succeeded' ? r : undefined;
    }, 'the confirmed Payment to succeed');
    const option = settled.body.options[0];
    assert.equal(option.status, 'completed');
    assert.equal(option.isTerminal, true);
    assert.equal(option.execution, null);
    assert.equal(option.transactionSubmissions[0].transactionHash, txHash.toLowerCase());
    assert.equal(option.receipts[0].transactionHash, txHash.toLowerCase());
    const late = await confirm(token, p.payment.id, {
      ...body,
      actionId: (
        await h.db.prisma.paymentAction.create({
          data: {
            id: 'action_late_test',
            paymentId: p.payment.id,
            optionId: option.id,
            accountId: payer,
            proofType: 'transaction',
            expiresAt: new Date(Date.now() + 60_000),
          },
        })
      ).id,
    });
    assert.equal(late.status, 409, late.text);
    assert.equal(late.body.error.code, 'payment_not_open');
  });

  test('two confirms racing on one action id: exactly one is answered 200, the other 409 action_already_used', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = await newPaymentFor(m, { amount: '3' });
    const token = await tokenFor(m.cred, await newAccount(m.cred));
    const actionId = (await readAsClient(token, p.payment.id, p.checkout.clientSecret)).body.options[0].execution.actionId as string;
    const txHash = await sendUnannounced(p.payment.funding.depositAddress.address, 3_000_000n);
    const body = { actionId, proof: { type: 'transaction', transactionHash: txHash } };
    const answers = await Promise.all([
      confirm(token, p.payment.id, body),
      confirm(token, p.payment.id, body),
      confirm(token, p.payment.id, body),
    ]);
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [200, 409, 409], answers.map((a) => a.text).join('\n'));
    for (const a of answers.filter((x) => x.status === 409)) assert.equal(a.body.error.details.reasonCode, 'action_already_used');
    assert.equal(await h.db.prisma.paymentTransfer.count({ where: { paymentId: p.payment.id } }), 1);
  });

  test('an escrow Payment whose funds are seen and confirming answers 409 payment_confirmation_not_supported', async () => {
    const m = await newMerchant();
    const p = await newPaymentFor(m, { amount: '5' });
    const payer = await newAccount(m.cred);
    const first = await tokenFor(m.cred, payer);
    const read = await readAsClient(first, p.payment.id, p.checkout.clientSecret);
    const a1 = read.body.options[0].execution.actionId;
    // On a held chain: no block after the transfer's (a settlement left by an earlier test included),
    // so the funds stay confirming for as long as the test looks.
    const sender = await newPayer(5_000_000n);
    const fromSender = (tx: PendingTx) => tx.from.toLowerCase() === sender.address.toLowerCase();
    const held = await sendOnHeldChain(
      () => sendUnannounced(p.payment.funding.depositAddress.address, 5_000_000n, sender),
      fromSender,
      'the transfer mined',
    );
    const txHash = held.result;
    try {
      const ok = await confirm(first, p.payment.id, { actionId: a1, proof: { type: 'transaction', transactionHash: txHash } });
      assert.equal(ok.status, 200, ok.text);
      // A second action of the payer's, as a read issues one once the first is used (issued directly: once
      // the funds are seen, a read issues none, there being nothing left to send).
      const a2 = (
        await issueAction((await getHarness()).db.prisma, {
          paymentId: p.payment.id,
          optionId: read.body.options[0].id,
          accountId: payer,
          proofType: 'transaction',
          expiresAt: new Date(p.payment.expiresAt),
        })
      ).id;
      assert.notEqual(a2, a1);
      // Not mined further: the funds stay confirming, and the next action is to wait (type none).
      await eventually(
        async () => {
          const r = await readAsClient(first, p.payment.id, p.checkout.clientSecret);
          return r.body.nextAction?.type === 'none' ? r : undefined;
        },
        'the funds to be seen',
        { mine: false },
      );
      const res = await confirm(first, p.payment.id, { actionId: a2, proof: { type: 'transaction', transactionHash: txHash } });
      assert.equal(res.status, 409, res.text);
      assert.equal(res.body.error.details.reasonCode, 'payment_confirmation_not_supported');
    } finally {
      await held.release();
    }
  });

  test('refuses a wrong proof type, unknown or foreign action ids, and a transaction that pays nothing (action kept)', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = await newPaymentFor(m);
    const alice = await newAccount(m.cred);
    const aliceToken = await tokenFor(m.cred, alice);
    const bobToken = await tokenFor(m.cred, await newAccount(m.cred));
    const actionId = (await readAsClient(aliceToken, p.payment.id, p.checkout.clientSecret)).body.options[0].execution.actionId as string;
    const hash = `0x${'ab'.repeat(32)}`;

    const wrongProof = await confirm(aliceToken, p.payment.id, {
      actionId,
      proof: { type: 'managed_authorization', authorization: 'approved' },
    });
    assert.equal(wrongProof.status, 400, wrongProof.text);
    assert.equal(wrongProof.body.error.details.reasonCode, 'proof_type_mismatch');
    const bobs = await confirm(bobToken, p.payment.id, { actionId, proof: { type: 'transaction', transactionHash: hash } });
    assert.equal(bobs.status, 404, bobs.text);
    const unknown = await confirm(aliceToken, p.payment.id, {
      actionId: 'action_unknown',
      proof: { type: 'transaction', transactionHash: hash },
    });
    assert.equal(unknown.status, 404);
    const q = await newPaymentFor(m);
    const otherPayment = await confirm(aliceToken, q.payment.id, { actionId, proof: { type: 'transaction', transactionHash: hash } });
    assert.equal(otherPayment.status, 404, 'an action id is bound to its Payment');
    const foreignApp = await newMerchant();
    const foreign = await confirm(await tokenFor(foreignApp.cred, foreignApp.accountId), p.payment.id, {
      actionId,
      proof: { type: 'transaction', transactionHash: hash },
    });
    assert.equal(foreign.status, 404);

    const elsewhere = await sendUnannounced((await newPaymentFor(m)).payment.funding.depositAddress.address, 1_000_000n);
    for (const transactionHash of [hash, elsewhere]) {
      const res = await confirm(aliceToken, p.payment.id, { actionId, proof: { type: 'transaction', transactionHash } });
      assert.equal(res.status, 409, res.text);
      assert.equal(res.body.error.details.reasonCode, 'transaction_not_found');
    }
    assert.equal((await h.db.prisma.paymentAction.findUniqueOrThrow({ where: { id: actionId } })).usedAt, null);
    assert.equal(await h.db.prisma.paymentTransfer.count({ where: { paymentId: p.payment.id } }), 0);
    // With a key, that refusal is not the key's answer: the key stays free for the retry once mined.
    const keyed = await confirm(
      aliceToken,
      p.payment.id,
      { actionId, proof: { type: 'transaction', transactionHash: hash } },
      { 'idempotency-key': 'not-mined-yet' },
    );
    assert.equal(keyed.body.error.details.reasonCode, 'transaction_not_found');
    const released = await h.db.prisma.idempotencyRecord.findUnique({
      where: { appId_key: { appId: m.cred.appId, key: `client:${alice}:not-mined-yet` } },
    });
    assert.equal(released?.state, 'released');
    // Other refusals are the key's answer, as everywhere else.
    const refused = await confirm(
      aliceToken,
      p.payment.id,
      { actionId, proof: { type: 'managed_authorization', authorization: 'approved' } },
      { 'idempotency-key': 'wrong-proof' },
    );
    assert.equal(refused.status, 400);
    assert.equal(
      (
        await h.db.prisma.idempotencyRecord.findUniqueOrThrow({
          where: { appId_key: { appId: m.cred.appId, key: `client:${alice}:wrong-proof` } },
        })
      ).responseStatus,
      400,
    );
  });

  test('validates the body: required fields, strict shapes, metadata limits, NUL characters, header patterns', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = await newPaymentFor(m);
    const token = await tokenFor(m.cred, await newAccount(m.cred));
    const actionId = (await readAsClient(token, p.payment.id, p.checkout.clientSecret)).body.options[0].execution.actionId as string;
    const proof = { type: 'transaction', transactionHash: `0x${'cd'.repeat(32)}` };
    const deep = { a: { b: { c: { d: 1 } } } };
    const bad: Array<[string, unknown]> = [
      ['no actionId', { proof }],
      ['no proof', { actionId }],
      ['empty actionId', { actionId: '', proof }],
      ['long actionId', { actionId: 'a'.repeat(129), proof }],
      ['unknown field', { actionId, proof, extra: 1 }],
      ['unknown proof type', { actionId, proof: { type: 'signature' } }],
      ['proof extra field', { actionId, proof: { ...proof, from: '0x' } }],
      ['short hash', { actionId, proof: { type: 'transaction', transactionHash: '0x1234' } }],
      ['NUL in actionId', { actionId: 'action_\u0000', proof }],
      ['NUL in metadata', { actionId, proof, metadata: { k: 'a\u0000' } }],
      ['metadata too deep', { actionId, proof, metadata: deep }],
      ['metadata 26 keys', { actionId, proof, metadata: Object.fromEntries(Array.from({ length: 26 }, (_, i) => [`k${i}`, i])) }],
      ['metadata 513 chars', { actionId, proof, metadata: { s: 'x'.repeat(513) } }],
      ['metadata 51 items', { actionId, proof, metadata: { l: Array.from({ length: 51 }, () => 1) } }],
      [
        'metadata over 4096 bytes',
        { actionId, proof, metadata: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, 'é'.repeat(250)])) },
      ],
      ['metadata an array', { actionId, proof, metadata: [] }],
    ];
    for (const [what, body] of bad) {
      const res = await confirm(token, p.payment.id, body);
      assert.equal(res.status, 400, `${what}: ${res.text}`);
      assert.equal(res.body.error.code, 'bad_request', what);
    }
    // At the limits exactly: accepted by validation (then refused for the unmined hash, action kept).
    const atLimits = { s: 'x'.repeat(512), l: Array.from({ length: 50 }, () => 1), n: { m: { o: 1 } } };
    const ok = await confirm(token, p.payment.id, { actionId, proof, metadata: atLimits });
    assert.equal(ok.status, 409, ok.text);
    assert.equal(ok.body.error.details.reasonCode, 'transaction_not_found');
    // Idempotency-Key: 1-256 printable ASCII; refused before the (valid) body is looked at.
    for (const key of ['é', 'a'.repeat(257), 'tab\there']) {
      const res = await confirm(token, p.payment.id, { actionId, proof }, { 'idempotency-key': key });
      assert.equal(res.status, 400, `${JSON.stringify(key)}: ${res.text}`);
      assert.match(res.body.error.details.fields[0].field, /^header/, res.text);
    }
    assert.equal((await h.db.prisma.paymentAction.findUniqueOrThrow({ where: { id: actionId } })).usedAt, null);
  });
});

describe('Client API: more checkout options', () => {
  test('an extraOptions provider adds its options after the direct one, and its action ids do not confirm a wallet transfer', async () => {
    const h = await getHarness();
    // A stand-in for the Vault option: its own method, id and single-use action, from the same tools.
    const extra: PaymentOptionProvider = async (ctx) => {
      const [direct] = await walletTransferOption(ctx);
      const id = paymentOptionId(ctx.serviceSecret, ctx.payment.id, 'vault');
      const action = await issueAction(ctx.prisma, {
        paymentId: ctx.payment.id,
        optionId: id,
        accountId: ctx.accountId,
        proofType: 'managed_authorization',
        expiresAt: ctx.payment.expiresAt,
      });
      return [
        {
          ...direct!,
          id,
          providerCode: 'vault',
          paymentMethodType: 'vault',
          execution: { actionId: action.id, type: 'managed_authorization', expiresAt: action.expiresAt.toISOString() },
        },
      ];
    };
    const api = createApi(
      await apiDepsOnHarness({ engine: h.engine, chains: h.chain.chains, client: { engine: h.engine, extraOptions: [extra] } }),
    );
    const s = await new Promise<Server>((resolve) => {
      const x = api.listen(0, '127.0.0.1', () => resolve(x));
    });
    try {
      const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
      const m = await newMerchant();
      const p = await newPaymentFor(m);
      const token = await tokenFor(m.cred, await newAccount(m.cred));
      const read = await call(`/v2/client/me/payments/${p.payment.id}`, {
        baseUrl: url,
        headers: bearer(token, { 'x-svc-payment-secret': p.checkout.clientSecret }),
      });
      assert.equal(read.status, 200, read.text);
      ZClientPaymentResponse.parse(read.body);
      assert.deepEqual(
        read.body.options.map((o: { paymentMethodType: string }) => o.paymentMethodType),
        ['wallet_transfer', 'vault'],
      );
      const vaultAction = read.body.options[1].execution.actionId as string;
      assert.notEqual(vaultAction, read.body.options[0].execution.actionId);
      const res = await call(`/v2/client/me/payments/${p.payment.id}/confirm`, {
        baseUrl: url,
        headers: bearer(token),
        body: { actionId: vaultAction, proof: { type: 'transaction', transactionHash: `0x${'12'.repeat(32)}` } },
      });
      assert.equal(res.status, 404, res.text);
      // The harness API (no extra providers) shows the direct option only.
      assert.equal((await readAsClient(token, p.payment.id, p.checkout.clientSecret)).body.options.length, 1);
    } finally {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });
});

describe('Client API: secrets stay out of logs and stored data', () => {
  test('the logger redacts the payment secret header and client tokens wherever a caller puts them', async () => {
    const out: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        out.push(chunk.toString('utf8'));
        cb();
      },
    });
    const logger = createLogger('info', stream);
    logger.info(
      {
        'x-svc-payment-secret': 'secret-top-1',
        ctx: { 'x-svc-payment-secret': 'secret-nested-2' },
        upstream: { headers: { 'x-svc-payment-secret': 'secret-headers-3', authorization: 'Bearer secret-bearer-4' } },
        req: { headers: { 'x-svc-payment-secret': 'secret-req-5' } },
        accessToken: 'secret-token-6',
        body: { accessToken: 'secret-token-7' },
      },
      'redaction check',
    );
    const text = await until(() => out.join('').match(/redaction check/)?.input, 'the line written');
    assert.match(text, /redaction check/);
    for (const n of [1, 2, 3, 4, 5, 6, 7]) assert.equal(text.includes(`-${n}"`), false, `${n}: ${text}`);
  });

  test('no token or payment secret this file issued is in any log line, stored idempotent response or event', async () => {
    const h = await getHarness();
    // The request log writes at the end of each request: one more request, and its line, mean every
    // earlier one has been written.
    const marker = `client-logs-${process.pid}`;
    await fetch(`${baseUrl}/v2/partners/config`, { headers: { 'x-request-id': marker } });
    await until(() => lines.some((l) => l.includes(marker)), "the last request's log line");
    assert.ok(lines.length > 50, `captured ${lines.length} lines`);
    assert.ok(
      lines.some((l) => l.includes('/v2/client/me/payments/') && l.includes('[Redacted]')),
      'the request lines were captured, headers redacted',
    );
    assert.ok(issued.size > 20, `issued ${issued.size}`);
    const log = lines.join('\n');
    const stored = (await h.db.prisma.idempotencyRecord.findMany({ select: { responseBody: true, key: true, path: true } }))
      .map((r) => JSON.stringify(r))
      .join('\n');
    const json = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
    const events = (await h.db.prisma.event.findMany()).map(json).join('\n');
    assert.ok(events.length > 0);
    for (const secret of issued) {
      // The signature is the secret part of a token; a payment secret is secret whole.
      const needle = secret.includes('.') ? (secret.split('.').at(-1) ?? '') : secret;
      if (needle.length < 20) continue;
      assert.equal(log.includes(needle), false, 'a secret reached a log line');
      assert.equal(stored.includes(needle), false, 'a secret reached a stored idempotent response');
      assert.equal(events.includes(needle), false, 'a secret reached an event');
    }
  });
});
