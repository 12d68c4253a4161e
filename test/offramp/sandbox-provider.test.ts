import assert from 'node:assert/strict';
import { cpSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { Address, Hash } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { freePort } from '../../src/embedded/process';
import { HttpOfframpProvider } from '../../src/offramp/http-provider';
import { ProviderError, type Payout, type PayoutStatus, type Quote } from '../../src/offramp/offramp-provider';
import { SIGNATURE_HEADER, signCallback } from '../../src/offramp/sandbox-provider/contract';
import { launchSandboxProvider } from '../../src/offramp/sandbox-provider/launch';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import { listenApi } from '../support/bounded-api';
import { newPayer, tokenBalance } from '../support/chain';
import { until } from '../support/until';

let unique = 0;
const id = (prefix: string) => `${prefix}_${process.pid}_${Date.now()}_${(unique += 1)}`;

async function asset() {
  const h = await getHarness();
  return { symbol: 'USDC', decimals: 6, chainId: h.chainId, tokenAddress: SANDBOX_TOKEN_ADDRESS };
}

async function quote(
  sourceAmountAtomic: bigint,
  currency = 'PHP',
  extra: { idempotencyKey?: string; sandboxScenario?: string } = {},
): Promise<Quote> {
  const h = await getHarness();
  return h.provider.adapter.quote({
    country: currency === 'USD' ? 'US' : currency === 'PHP' ? 'PH' : 'VN',
    currency,
    rail: 'bank_transfer',
    asset: await asset(),
    sourceAmountAtomic,
    ...extra,
  });
}

async function verifiedAccount(accountNumber = '000123456789'): Promise<{ bankAccountId: string; providerAccountId: string }> {
  const h = await getHarness();
  const bankAccountId = id('ba');
  const registered = await h.provider.adapter.registerBankAccount({
    bankAccountId,
    country: 'PH',
    currency: 'PHP',
    accountHolderName: 'Maria Santos',
    beneficiaryType: 'individual',
    bankCode: 'BPI',
    accountNumber,
    rail: 'bank_transfer',
    details: {},
  });
  await until(
    () =>
      h.provider.received.find(
        (c) => c.type === 'bank_account.updated' && c.bankAccountId === bankAccountId && c.account.status === 'verified',
      ),
    'verification',
  );
  return { bankAccountId, providerAccountId: registered.providerAccountId };
}

/** A quote, and its exact source amount sent on chain to its deposit address. */
async function fundedQuote(amountAtomic: bigint): Promise<{ quote: Quote; fundingTxHash: Hash }> {
  const h = await getHarness();
  const q = await quote(amountAtomic);
  const payer = await newPayer(amountAtomic);
  const chain = h.chain.chains.get(h.chainId);
  const fundingTxHash = await chain.sendTokenTransfer({
    from: payer,
    token: SANDBOX_TOKEN_ADDRESS,
    to: q.depositAddress as Address,
    amountAtomic,
  });
  await until(
    async () => ((await chain.getTransactionStatus(fundingTxHash, 1)) === 'confirmed' ? true : undefined),
    'the funding transfer',
  );
  return { quote: q, fundingTxHash };
}

async function payoutRequest(scenario: string | undefined, amountAtomic = 25_000_000n) {
  const { providerAccountId } = await verifiedAccount();
  const { quote: q, fundingTxHash } = await fundedQuote(amountAtomic);
  const refundAddress = privateKeyToAccount(generatePrivateKey()).address;
  return {
    paymentId: id('pay'),
    quoteId: q.quoteId,
    providerAccountId,
    amountAtomic,
    fundingTxHash,
    refundAddress,
    ...(scenario ? { sandboxScenario: scenario } : {}),
  };
}

async function callbackStatuses(paymentId: string, last: PayoutStatus): Promise<Payout[]> {
  const h = await getHarness();
  const mine = () =>
    h.provider.received.flatMap((c) => (c.type === 'payout.updated' && c.payout.paymentId === paymentId ? [c.payout] : []));
  await until(() => (mine().some((p) => p.status === last) ? true : undefined), `a ${last} callback`);
  return mine();
}

async function rejection(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ProviderError, `a ProviderError, not ${String(err)}`);
    return err;
  }
  assert.fail('expected a ProviderError');
}

/** A payout.updated callback body claiming `status` (what it claims is never applied). */
const payoutEvent = (paymentId: string, status: string = 'completed') =>
  JSON.stringify({
    id: 'evt_test',
    type: 'payout.updated',
    createdAt: new Date().toISOString(),
    data: {
      payoutId: 'po_sbx_test',
      paymentId,
      status,
      amountAtomic: '1',
      reasonCode: null,
      refundTxHash: null,
      returnAt: null,
      updatedAt: new Date().toISOString(),
    },
  });
const now = () => Math.floor(Date.now() / 1000);
/** Posts a callback body to an API's callback route (the harness API unless another is given). */
async function post(body: string, signature: string | undefined, opts: { code?: string; baseUrl?: string } = {}) {
  const h = await getHarness();
  const res = await fetch(`${opts.baseUrl ?? h.baseUrl}/v2/providers/${opts.code ?? 'sandbox'}/callbacks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(signature ? { [SIGNATURE_HEADER]: signature } : {}) },
    body,
  });
  return { status: res.status, body: (await res.json()) as { error?: { code: string } } };
}
const answersFor = async (paymentId: string) =>
  (await getHarness()).provider.received.flatMap((c) =>
    c.type === 'payout.updated' && c.payout.paymentId === paymentId ? [c.payout] : [],
  );

describe('Sandbox off-ramp provider: quotes and bank accounts', () => {
  test('quotes PHP, USD and VND at the sandbox rates after a 0.5 % fee (0.50 at least), pays into its own address, and answers the same quote to the same key', async () => {
    const h = await getHarness();
    const php = await quote(100_000_000n, 'PHP', { idempotencyKey: id('q') });
    assert.equal(php.providerFeeAtomic, 500_000n);
    assert.equal(php.providerPrincipalAtomic, 99_500_000n);
    assert.equal(php.rate, '58.2');
    assert.equal(php.destinationAmount, '5790.90');
    assert.equal(php.depositAddress, h.provider.address);
    assert.ok(php.expiresAt.getTime() > Date.now() + 500_000);
    const usd = await quote(10_000_000n, 'USD');
    assert.deepEqual([usd.providerFeeAtomic, usd.destinationAmount], [500_000n, '9.50']); // the 0.50 minimum
    const vnd = await quote(100_000_000n, 'VND');
    assert.equal(vnd.destinationAmount, '2527300');

    const key = id('q');
    const first = await quote(50_000_000n, 'PHP', { idempotencyKey: key });
    const again = await quote(50_000_000n, 'PHP', { idempotencyKey: key });
    assert.equal(again.quoteId, first.quoteId);
    assert.equal((await rejection(quote(60_000_000n, 'PHP', { idempotencyKey: key }))).providerCode, 'idempotency_conflict');
    assert.equal((await rejection(quote(50_000_000n, 'EUR'))).providerCode, 'unsupported_currency');
    assert.equal((await rejection(quote(400_000n, 'PHP'))).providerCode, 'amount_too_small');
    assert.equal((await rejection(quote(50_000_000n, 'PHP', { sandboxScenario: 'error_5xx' }))).kind, 'unavailable');
  });

  test('registers a bank account as pending, then a signed callback verifies it; an account number ending 0002 fails as account_not_found; other details under the same id are refused', async () => {
    const h = await getHarness();
    const bankAccountId = id('ba');
    const registration = {
      bankAccountId,
      country: 'PH',
      currency: 'PHP',
      accountHolderName: 'Jose Rizal',
      beneficiaryType: 'individual' as const,
      bankCode: 'BDO',
      accountNumber: '11110002',
      rail: 'bank_transfer',
      details: {},
    };
    // The first callback is refused (503): the provider sends it again.
    let refusals = 0;
    h.provider.handlers.onBankAccountUpdated = async (bid) => {
      if (bid === bankAccountId && refusals === 0) {
        refusals += 1;
        throw new Error('not now');
      }
    };
    try {
      const pending = await h.provider.adapter.registerBankAccount(registration);
      assert.deepEqual([pending.status, pending.failureReason], ['pending', null]);
      const replay = await h.provider.adapter.registerBankAccount(registration);
      assert.equal(replay.providerAccountId, pending.providerAccountId);
      const callback = await until(
        () => h.provider.received.find((c) => c.type === 'bank_account.updated' && c.bankAccountId === bankAccountId),
        'the failed verification',
      );
      assert.deepEqual(callback.type === 'bank_account.updated' && callback.account, {
        providerAccountId: pending.providerAccountId,
        status: 'failed',
        failureReason: 'account_not_found',
      });
      assert.equal(refusals, 1, 'the callback reached the handler after a refusal');
      assert.deepEqual(await h.provider.adapter.getBankAccount(bankAccountId), {
        providerAccountId: pending.providerAccountId,
        status: 'failed',
        failureReason: 'account_not_found',
      });
    } finally {
      h.provider.handlers.onBankAccountUpdated = undefined;
    }
    const conflict = await rejection(h.provider.adapter.registerBankAccount({ ...registration, accountNumber: '99990001' }));
    assert.deepEqual([conflict.kind, conflict.providerCode], ['failure', 'idempotency_conflict']);
    assert.doesNotMatch(conflict.message, /9999|1111/, 'no account number in errors');
    const { providerAccountId } = await verifiedAccount();
    assert.match(providerAccountId, /^ba_sbx_/);
  });
});

describe('Sandbox off-ramp provider: payouts by scenario', () => {
  test('succeed: the payout is submitted, then processing and completed callbacks arrive, and getPayout reads it', async () => {
    const h = await getHarness();
    const request = await payoutRequest(undefined);
    const created = await h.provider.adapter.createPayout(request);
    assert.deepEqual([created.paymentId, created.status, created.refundTxHash], [request.paymentId, 'submitted', null]);
    // One callback per step (processing, completed); each led to a read of the payout as it then was.
    await callbackStatuses(request.paymentId, 'completed');
    const seen = await until(
      async () => ((await answersFor(request.paymentId)).length === 2 ? answersFor(request.paymentId) : undefined),
      'an answer per callback',
    );
    assert.equal(h.provider.hints.filter((c) => c.type === 'payout.updated' && c.paymentId === request.paymentId).length, 2);
    assert.ok(['processing', 'completed'].includes(seen[0]!.status), seen[0]!.status);
    assert.equal(seen[1]!.status, 'completed');
    assert.ok(seen.every((p) => p.payoutId === created.payoutId));
    const read = await h.provider.adapter.getPayout(request.paymentId);
    assert.deepEqual([read?.payoutId, read?.status], [created.payoutId, 'completed']);
    assert.equal(await h.provider.adapter.getPayout(id('pay')), null);
    // A replay of the same request answers the same payout.
    assert.equal((await h.provider.adapter.createPayout(request)).payoutId, created.payoutId);
  });

  test('fail: the payout fails after funding and exactly amountAtomic goes back on chain to refundAddress, named by refundTxHash', async () => {
    const h = await getHarness();
    const request = await payoutRequest('fail', 12_345_678n);
    await h.provider.adapter.createPayout(request);
    const seen = await callbackStatuses(request.paymentId, 'failed');
    const failed = seen.at(-1)!;
    assert.equal(failed.reasonCode, 'bank_rejected');
    assert.match(failed.refundTxHash ?? '', /^0x[0-9a-f]{64}$/);
    assert.equal(await tokenBalance(request.refundAddress), 12_345_678n);
    const receipt = await h.chain.chains.get(h.chainId).getTransactionStatus(failed.refundTxHash as Hash, 1);
    assert.equal(receipt, 'confirmed');
  });

  test('timeout: the first two requests hang past the adapter deadline (unavailable), the payout exists from the first, and the retry with the same key finds it: one payout, not two', async () => {
    const h = await getHarness();
    const impatient = new HttpOfframpProvider({ baseUrl: h.provider.url, callbackSecret: h.provider.callbackSecret, timeoutMs: 300 });
    const request = await payoutRequest('timeout');
    assert.equal((await rejection(impatient.createPayout(request))).kind, 'unavailable');
    const made = await h.provider.adapter.getPayout(request.paymentId);
    assert.ok(made, 'the payout was created by the request that timed out');
    assert.equal((await rejection(impatient.createPayout(request))).kind, 'unavailable');
    const retried = await h.provider.adapter.createPayout(request);
    assert.equal(retried.payoutId, made.payoutId);
    const seen = await callbackStatuses(request.paymentId, 'completed');
    assert.equal(new Set(seen.map((p) => p.payoutId)).size, 1);
  });

  test('error_5xx: the first two requests answer 503 (unavailable) and create nothing; the third creates the payout', async () => {
    const h = await getHarness();
    const request = await payoutRequest('error_5xx');
    assert.equal((await rejection(h.provider.adapter.createPayout(request))).kind, 'unavailable');
    assert.equal(await h.provider.adapter.getPayout(request.paymentId), null);
    assert.equal((await rejection(h.provider.adapter.createPayout(request))).kind, 'unavailable');
    const created = await h.provider.adapter.createPayout(request);
    assert.equal(created.status, 'submitted');
    await callbackStatuses(request.paymentId, 'completed');
  });

  test('uncertain: createPayout and getPayout throw uncertain (never a status) until the control endpoint resolves it; then a completed callback', async () => {
    const h = await getHarness();
    const request = await payoutRequest('uncertain');
    const created = await rejection(h.provider.adapter.createPayout(request));
    assert.deepEqual([created.kind, created.providerCode], ['uncertain', 'payout_uncertain']);
    assert.equal((await rejection(h.provider.adapter.getPayout(request.paymentId))).kind, 'uncertain');
    assert.equal(
      (await rejection(h.provider.adapter.createPayout(request))).kind,
      'uncertain',
      'a replay is uncertain too, not a second payout',
    );
    // A signed callback claiming completed meanwhile hands nothing on: the provider can't tell yet.
    const body = payoutEvent(request.paymentId, 'completed');
    assert.equal((await post(body, signCallback(h.provider.callbackSecret, body, now()))).status, 200);
    assert.deepEqual(await answersFor(request.paymentId), []);
    const resolved = await h.provider.resolvePayout(request.paymentId, 'completed');
    assert.equal(resolved.status, 200, await resolved.text());
    const seen = await callbackStatuses(request.paymentId, 'completed');
    assert.deepEqual(
      seen.map((p) => p.status),
      ['completed'],
    );
    assert.equal((await h.provider.adapter.getPayout(request.paymentId))?.status, 'completed');
    assert.equal((await h.provider.resolvePayout(request.paymentId, 'failed')).status, 409, 'only an uncertain payout is resolved');
  });

  test('return: a completed payout is due back in 3 days; the control endpoint returns it now with R01, the amount back on chain and a returned callback', async () => {
    const h = await getHarness();
    const request = await payoutRequest('return', 7_000_000n);
    await h.provider.adapter.createPayout(request);
    await callbackStatuses(request.paymentId, 'completed');
    const due = (await (await fetch(`${h.provider.url}/v1/payouts/${request.paymentId}`)).json()) as { returnAt: string };
    assert.ok(Date.parse(due.returnAt) > Date.now() + 2.9 * 24 * 3600 * 1000, `returnAt ${due.returnAt}`);
    const res = await h.provider.returnPayout(request.paymentId);
    assert.equal(res.status, 202, await res.text());
    const returned = (await callbackStatuses(request.paymentId, 'returned')).at(-1)!;
    assert.equal(returned.reasonCode, 'R01');
    assert.ok(returned.refundTxHash);
    assert.equal(await tokenBalance(request.refundAddress), 7_000_000n);
    assert.equal((await h.provider.returnPayout(request.paymentId)).status, 409, 'a payout comes back once');
  });

  test('refusals: another body under the same paymentId, a funding transfer that is not there or of another amount, and a lapsed quote (quote_expired)', async () => {
    const h = await getHarness();
    const request = await payoutRequest(undefined);
    const created = await h.provider.adapter.createPayout(request);
    const conflict = await rejection(
      h.provider.adapter.createPayout({ ...request, refundAddress: privateKeyToAccount(generatePrivateKey()).address }),
    );
    assert.deepEqual([conflict.kind, conflict.providerCode], ['failure', 'idempotency_conflict']);
    assert.equal((await h.provider.adapter.getPayout(request.paymentId))?.payoutId, created.payoutId);
    const reused = await rejection(h.provider.adapter.createPayout({ ...request, paymentId: id('pay') }));
    assert.equal(reused.providerCode, 'funding_already_used');

    const { providerAccountId } = await verifiedAccount();
    const q = await quote(25_000_000n);
    const elsewhere = {
      paymentId: id('pay'),
      quoteId: q.quoteId,
      providerAccountId,
      amountAtomic: 25_000_000n,
      fundingTxHash: request.fundingTxHash,
      refundAddress: request.refundAddress,
    };
    const missing = await rejection(h.provider.adapter.createPayout({ ...elsewhere, fundingTxHash: `0x${'ab'.repeat(32)}` }));
    assert.deepEqual([missing.kind, missing.providerCode], ['failure', 'funding_not_found']);
    // A transfer to the provider, but of 30 USDC for a 25 USDC payout.
    const { fundingTxHash } = await fundedQuote(30_000_000n);
    const wrongAmount = await rejection(h.provider.adapter.createPayout({ ...elsewhere, quoteId: q.quoteId, fundingTxHash }));
    assert.deepEqual([wrongAmount.kind, wrongAmount.providerCode], ['failure', 'funding_amount_mismatch']);
    const lapsed = await quote(25_000_000n, 'PHP', { sandboxScenario: 'expired' });
    const expired = await rejection(h.provider.adapter.createPayout({ ...elsewhere, paymentId: id('pay'), quoteId: lapsed.quoteId }));
    assert.equal(expired.kind, 'quote_expired');
  });

  test('a restarted provider keeps its payouts: a second process on a copy of its data dir reads the same payout', async () => {
    const h = await getHarness();
    const request = await payoutRequest(undefined);
    const created = await h.provider.adapter.createPayout(request);
    await callbackStatuses(request.paymentId, 'completed');
    const copy = mkdtempSync(path.join(os.tmpdir(), 'pp-test-provider-copy-'));
    cpSync(h.provider.dataDir, copy, { recursive: true });
    const second = await launchSandboxProvider({
      port: await freePort(),
      dataDir: copy,
      rpcUrl: h.rpcUrl,
      chainId: h.chainId,
      callbackSecret: h.provider.callbackSecret,
      env: h.provider.env,
    });
    try {
      assert.equal(second.address, h.provider.address, 'the same key, kept under its data dir');
      const adapter = new HttpOfframpProvider({ baseUrl: second.url, callbackSecret: h.provider.callbackSecret });
      const read = await adapter.getPayout(request.paymentId);
      assert.deepEqual([read?.payoutId, read?.status], [created.payoutId, 'completed']);
    } finally {
      await second.stop();
    }
  });

  test('a provider that does not answer is unavailable, never a failure', async () => {
    const h = await getHarness();
    const closed = new HttpOfframpProvider({
      baseUrl: `http://127.0.0.1:${await freePort()}`,
      callbackSecret: h.provider.callbackSecret,
      timeoutMs: 500,
    });
    assert.equal((await rejection(closed.getPayout('pay_x'))).kind, 'unavailable');
  });
});

describe('POST /v2/providers/{providerCode}/callbacks', () => {
  test('answers 401 to a missing, forged or 5-minute-old signature, 400 to a signed body that is not a callback, 404 to another provider, and 200 to a genuine one', async () => {
    const h = await getHarness();
    const paymentId = id('pay');
    const body = payoutEvent(paymentId);
    const secret = h.provider.callbackSecret;
    assert.deepEqual(await post(body, undefined), {
      status: 401,
      body: { error: { code: 'unauthorized', message: 'The callback signature is missing, stale or wrong' } },
    });
    assert.equal((await post(body, signCallback('another-secret-0123456789abcdef', body, now()))).status, 401);
    assert.equal((await post(body, signCallback(secret, body, now() - 301))).status, 401);
    assert.equal((await post(`${body} `, signCallback(secret, body, now()))).status, 401, 'the signature covers the exact bytes');
    const notJson = '{"type":';
    assert.equal((await post(notJson, signCallback(secret, notJson, now()))).body.error?.code, 'bad_request');
    const unknown = JSON.stringify({ id: 'evt', type: 'payout.deleted', createdAt: new Date().toISOString(), data: {} });
    assert.equal((await post(unknown, signCallback(secret, unknown, now()))).status, 400);
    assert.equal((await post(body, signCallback(secret, body, now()), { code: 'other' })).status, 404);
    assert.ok(
      !h.provider.hints.some((c) => c.type === 'payout.updated' && c.paymentId === paymentId),
      'nothing refused was taken as a callback',
    );
    // Genuine, for a payout the provider does not have: 200, and nothing is handed on.
    assert.deepEqual(await post(body, signCallback(secret, body, now())), { status: 200, body: { received: true } });
    assert.ok(h.provider.hints.some((c) => c.type === 'payout.updated' && c.paymentId === paymentId));
    assert.deepEqual(await answersFor(paymentId), []);
  });

  test("a genuine callback hands on the provider's answer, never its own claim (a claimed failed for a completed payout hands on completed)", async () => {
    const h = await getHarness();
    const request = await payoutRequest(undefined);
    const created = await h.provider.adapter.createPayout(request);
    await callbackStatuses(request.paymentId, 'completed');
    const before = (await answersFor(request.paymentId)).length;
    const body = payoutEvent(request.paymentId, 'failed');
    assert.equal((await post(body, signCallback(h.provider.callbackSecret, body, now()))).status, 200);
    const answers = await answersFor(request.paymentId);
    assert.equal(answers.length, before + 1);
    assert.deepEqual([answers.at(-1)!.payoutId, answers.at(-1)!.status, answers.at(-1)!.reasonCode], [created.payoutId, 'completed', null]);
  });

  test('answers 503 when the provider cannot be read or the handler fails, so the provider sends the callback again', async () => {
    const h = await getHarness();
    const request = await payoutRequest(undefined);
    await h.provider.adapter.createPayout(request);
    await callbackStatuses(request.paymentId, 'completed');
    const body = payoutEvent(request.paymentId);
    h.provider.handlers.onPayoutUpdated = async (payout) => {
      if (payout.paymentId === request.paymentId) throw new Error('database down');
    };
    try {
      const res = await post(body, signCallback(h.provider.callbackSecret, body, now()));
      assert.deepEqual([res.status, res.body.error?.code], [503, 'service_unavailable']);
    } finally {
      h.provider.handlers.onPayoutUpdated = undefined;
    }
    const unreadable = new HttpOfframpProvider({
      baseUrl: `http://127.0.0.1:${await freePort()}`,
      callbackSecret: h.provider.callbackSecret,
      timeoutMs: 500,
    });
    const handedOn: Payout[] = [];
    const down = await listenApi(
      await apiDepsOnHarness({ offramp: { provider: unreadable, onPayoutUpdated: async (payout) => void handedOn.push(payout) } }),
    );
    try {
      const res = await post(body, signCallback(h.provider.callbackSecret, body, now()), { baseUrl: down.baseUrl });
      assert.deepEqual([res.status, res.body.error?.code], [503, 'service_unavailable']);
      assert.deepEqual(handedOn, []);
    } finally {
      await down.close();
    }
  });
});
