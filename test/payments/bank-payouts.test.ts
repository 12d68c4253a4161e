import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { createApi } from '../../src/http/app';
import { createTemporalGateway, type TemporalGateway } from '../../src/temporal/gateway';
import { createWorker } from '../../src/temporal/worker';
import { awaitWorkflowResult } from '../support/workflow-result';
import { terminateAtRest } from '../support/engine-clock';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { ZPaymentResponse } from '../../src/domain/payments/payment.schemas';
import { onPayoutUpdated } from '../../src/domain/payments/payment-payouts';
import {
  ProviderError,
  type OfframpProvider,
  type Payout,
  type PayoutRequest,
  type PayoutStatus,
  type Quote,
  type QuoteRequest,
} from '../../src/offramp/offramp-provider';
import { HttpOfframpProvider } from '../../src/offramp/http-provider';
import { SIGNATURE_HEADER, signCallback } from '../../src/offramp/sandbox-provider/contract';
import { call } from '../support/api-client';
import { eventually, newPayer, payTo, setNativeBalance, tokenBalance } from '../support/chain';
import { until } from '../support/until';
import { endsWithBooksChecked } from '../support/books';
import { apiDepsOnHarness, getHarness, TEST_OFFRAMP_CALLBACK_SECRET, TEST_SERVICE_SECRET, testEnginePolicies } from '../support/harness';
import { eventNames } from '../support/fixtures';
import { createBankPayment, newBankParty, readBankPayment, waitForBankPayment, type BankParty } from './bank-fixtures';

/**
 * Send Payments to a linked bank account on anvil, with an in-process stand-in provider for what the
 * sandbox provider process can't be made to do per test (quote errors and lifetimes, exact amounts,
 * step-by-step payout updates); the flows against the real process (fail, 5xx, timeout, uncertain,
 * return) are in bank-payouts-provider.test.ts. Callbacks go through onPayoutUpdated, as the
 * callback route's hook does. The suite runs its own API and worker on its own task queue.
 */
class StandInProvider implements OfframpProvider {
  readonly code = 'sandbox';
  /** Per quoted amount (the suite's tests run at once, each with its own amount): a quote's lifetime or error. */
  readonly quoteRules = new Map<bigint, { ttlMs?: number; error?: ProviderError }>();
  /** Per provider account (one per test): thrown by createPayout, in order, before it succeeds. */
  readonly createErrors = new Map<string, ProviderError[]>();
  readonly requests: PayoutRequest[] = [];
  readonly payouts = new Map<string, Payout>();
  readonly depositKeys = new Map<string, PrivateKeyAccount>();
  private n = 0;

  async quote(request: QuoteRequest): Promise<Quote> {
    const rule = this.quoteRules.get(request.sourceAmountAtomic);
    if (rule?.error) throw rule.error;
    const fee = request.sourceAmountAtomic / 100n;
    const deposit = privateKeyToAccount(generatePrivateKey());
    await setNativeBalance(deposit.address, 10n ** 18n);
    const quoteId = `quote_${++this.n}`;
    this.depositKeys.set(deposit.address.toLowerCase(), deposit);
    const principal = request.sourceAmountAtomic - fee;
    return {
      quoteId,
      providerPrincipalAtomic: principal,
      providerFeeAtomic: fee,
      rate: '1.0000',
      destinationAmount: `${principal / 10n ** 6n}.${(principal % 10n ** 6n).toString().padStart(6, '0').slice(0, 2)}`,
      currency: request.currency,
      depositAddress: deposit.address,
      expiresAt: new Date(Date.now() + (rule?.ttlMs ?? 15 * 60_000)),
    };
  }

  async registerBankAccount(): Promise<never> {
    throw new ProviderError('failure', 'not used here');
  }

  async createPayout(request: PayoutRequest): Promise<Payout> {
    this.requests.push(request);
    const error = this.createErrors.get(request.providerAccountId)?.shift();
    if (error) throw error;
    const existing = this.payouts.get(request.paymentId);
    if (existing) return existing;
    const payout: Payout = {
      payoutId: `payout_${++this.n}`,
      paymentId: request.paymentId,
      status: 'submitted',
      reasonCode: null,
      refundTxHash: null,
      updatedAt: new Date(),
    };
    this.payouts.set(request.paymentId, payout);
    return payout;
  }

  async getPayout(paymentId: string): Promise<Payout | null> {
    return this.payouts.get(paymentId) ?? null;
  }

  async getBankAccount(): Promise<null> {
    return null;
  }

  /** The sandbox provider's signature check (the callbacks this suite posts are signed as its). */
  private readonly signatures = new HttpOfframpProvider({ baseUrl: 'http://127.0.0.1:9', callbackSecret: TEST_OFFRAMP_CALLBACK_SECRET });

  verifyCallback(rawBody: string, headers: Record<string, string | string[] | undefined>) {
    return this.signatures.verifyCallback(rawBody, headers);
  }
}

const provider = new StandInProvider();
let gateway: TemporalGateway;
let worker: Worker;
let running: Promise<void>;
let server: Server;
let baseUrl: string;
/** What the suite API's callback route handed on to onPayoutUpdated, in order. */
const handedOn: Payout[] = [];

/** A callback as the provider signs it, claiming `status` for the payment's payout. */
async function postCallback(paymentId: string, status: PayoutStatus) {
  const payout = provider.payouts.get(paymentId);
  const at = new Date().toISOString();
  const data = {
    payoutId: payout?.payoutId ?? 'po_unknown',
    paymentId,
    status,
    amountAtomic: '1',
    reasonCode: null,
    refundTxHash: null,
    returnAt: null,
    updatedAt: at,
  };
  const body = JSON.stringify({ id: `evt_${paymentId}_${status}`, type: 'payout.updated', createdAt: at, data });
  const res = await fetch(`${baseUrl}/v2/providers/sandbox/callbacks`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [SIGNATURE_HEADER]: signCallback(TEST_OFFRAMP_CALLBACK_SECRET, body, Math.floor(Date.now() / 1000)),
    },
    body,
  });
  return { status: res.status, text: await res.text() };
}

/** The provider moves a payout (and tells no one); failed and returned send the stablecoin back to escrow first. */
async function providerChanges(paymentId: string, status: PayoutStatus, reasonCode: string | null = null): Promise<Payout> {
  const h = await getHarness();
  const current = provider.payouts.get(paymentId);
  assert.ok(current, `the provider holds a payout for ${paymentId}`);
  let refundTxHash: string | null = null;
  if (status === 'failed' || status === 'returned') {
    const request = provider.requests.find((r) => r.paymentId === paymentId)!;
    const payment = await h.db.prisma.payment.findUniqueOrThrow({ where: { id: paymentId }, include: { payout: true } });
    const from = provider.depositKeys.get(payment.payout!.depositAddress)!;
    refundTxHash = await h.chain.chains
      .get(h.chainId)
      .sendTokenTransfer({ from, token: SANDBOX_TOKEN_ADDRESS, to: request.refundAddress as Address, amountAtomic: request.amountAtomic });
  }
  const payout: Payout = { ...current, status, reasonCode, refundTxHash, updatedAt: new Date() };
  provider.payouts.set(paymentId, payout);
  return payout;
}

/** The provider moves a payout and its update reaches the Payment's workflow. */
async function providerMoves(paymentId: string, status: PayoutStatus, reasonCode: string | null = null): Promise<Payout> {
  const h = await getHarness();
  const payout = await providerChanges(paymentId, status, reasonCode);
  await onPayoutUpdated(
    { prisma: h.db.prisma, engine: gateway, confirmationsOf: (chainId) => h.chain.chains.network(chainId).confirmations },
    payout,
  );
  return payout;
}

/** Payments this suite created: their workflows run on its own task queue, and end with it. */
const created = new Set<string>();
const newParty = (status = 'verified') => newBankParty({ status, baseUrl });
async function createPayment(p: BankParty, overrides: Record<string, unknown> = {}) {
  const res = await createBankPayment(p, overrides);
  if (res.status === 201) created.add(res.body.payment.id as string);
  return res;
}
const readPayment = readBankPayment;
const waitFor = waitForBankPayment;

/** A created bank Payment funded by its sender: it waits for the provider's payout. */
async function fundedAtProvider(p: BankParty, overrides: Record<string, unknown> = {}) {
  const created = await createPayment(p, overrides);
  assert.equal(created.status, 201, created.text);
  const payment = created.body.payment;
  const payer = await newPayer(BigInt(payment.funding.required.amountAtomic));
  await payTo(payer, payment.funding.depositAddress.address, BigInt(payment.funding.required.amountAtomic));
  return waitFor(p, payment.id, 'submitted at the provider', (x) => x.offrampStatus === 'submitted');
}

// Each test has its own app, accounts, amounts and provider rules (they don't share state), but they
// run one by one: the lapsed-quote case needs the chain to stay still while its transfer is seen.
describe('bank payouts', () => {
  endsWithBooksChecked();

  before(async () => {
    const h = await getHarness();
    const taskQueue = 'bank-payouts-test';
    gateway = createTemporalGateway(h.env.client, {
      taskQueue,
      safetyNetFloorSeconds: 0,
      policies: { ...testEnginePolicies(), payment: { payoutPollSeconds: 2 } },
    });
    worker = await createWorker({
      connection: h.env.nativeConnection,
      namespace: h.env.namespace ?? 'default',
      taskQueue,
      workflowBundle: h.workflowBundle,
      activities: createActivities({
        db: h.db,
        logger: h.logger,
        chains: h.chain.chains,
        custody: h.chain.custody,
        engine: gateway,
        serviceSecret: TEST_SERVICE_SECRET,
        offramp: provider,
      }),
      shutdownGraceTime: '5s',
    });
    running = worker.run();
    const offramp = {
      provider,
      onPayoutUpdated: async (payout: Payout) => {
        handedOn.push(payout);
        await onPayoutUpdated(
          { prisma: h.db.prisma, engine: gateway, confirmationsOf: (chainId) => h.chain.chains.network(chainId).confirmations },
          payout,
        );
      },
    };
    const api = createApi(await apiDepsOnHarness({ engine: gateway, chains: h.chain.chains, offramp }));
    server = await new Promise((resolve) => {
      const s = api.listen(0, '127.0.0.1', () => resolve(s));
    });
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    // A workflow left on this queue without its worker would hold the time-skipping clock for the
    // files that follow: the ones still running (a Payment never funded) end here.
    const h = await getHarness();
    for (const id of created) {
      const { status } = await h.env.client.workflow.getHandle(id).describe();
      if (status.name === 'RUNNING') await terminateAtRest(h.env, id, 'bank payouts suite ended');
    }
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    worker?.shutdown();
    await running;
  });

  test('creation quotes the payout: bank destination, the provider principal and fee, the rate, the quote expiry (expiresAt clipped to it)', async () => {
    const p = await newParty();
    provider.quoteRules.set(10_835_000n, { ttlMs: 5 * 60_000 });
    const res = await createPayment(p, { amount: '11', expiresInSeconds: 3600 });
    assert.equal(res.status, 201, res.text);
    const payment = ZPaymentResponse.parse(res.body).payment;
    assert.deepEqual(payment.destination, { type: 'bank_account', accountId: p.ownerId, bankAccountId: p.bankAccountId });
    assert.deepEqual(payment.participants, [
      { role: 'sender', accountId: p.senderId },
      { role: 'recipient', accountId: p.ownerId },
    ]);
    assert.equal(payment.offrampStatus, null);
    // 11 USDC less 1% + 0.5% fees: the provider gets 10.835, keeps 1% of it.
    assert.equal(payment.funding!.required.amountAtomic, '11000000');
    assert.equal(payment.funding!.providerPrincipal.amountAtomic, '10726650');
    assert.equal(payment.funding!.providerFee.amountAtomic, '108350');
    assert.deepEqual(payment.funding!.exchangeRate, { rate: '1.0000', baseAssetCode: 'USDC', quoteAssetCode: 'USD' });
    const row = await (await getHarness()).db.prisma.paymentPayout.findUniqueOrThrow({ where: { paymentId: payment.id } });
    assert.equal(payment.funding!.quoteExpiresAt, row.quoteExpiresAt.toISOString());
    assert.equal(payment.expiresAt, payment.funding!.quoteExpiresAt, 'the Payment expires with its quote');
    assert.equal(payment.settlement.destinationAddress, row.depositAddress);
    // Never funded, it expires with its quote: its run ends here rather than being terminated later
    // (terminating a run mid-task leaks a lock of the time-skipping clock on the test server).
    const ended = await awaitWorkflowResult<{ status: string }>(await getHarness(), payment.id);
    assert.equal(ended.status, 'expired');
  });

  test('creation refuses what it cannot quote, and creates nothing: provider down 503, provider refusal 502, unverified account or over the country maximum 422, receive 400', async () => {
    const p = await newParty();
    const h = await getHarness();
    const before = await h.db.prisma.payment.count({ where: { appId: p.cred.appId } });
    provider.quoteRules.set(11_820_000n, { error: new ProviderError('unavailable', 'timeout') });
    provider.quoteRules.set(12_805_000n, { error: new ProviderError('failure', 'corridor closed', 'corridor_closed') });
    const down = await createPayment(p, { amount: '12' });
    const refused = await createPayment(p, { amount: '13' });
    assert.equal(down.status, 503, down.text);
    assert.equal(down.body.error.code, 'payment_provider_unavailable');
    assert.equal(refused.status, 502, refused.text);
    assert.equal(refused.body.error.code, 'payment_provider_error');
    const unverified = await newParty('pending_verification');
    const pending = await createPayment(unverified);
    assert.equal(pending.status, 422, pending.text);
    // The config's externalBank country bounds (sandbox US: 1 to 10,000 USDC) are enforced.
    const tooMuch = await createPayment(p, { amount: '10000.5' });
    assert.equal(tooMuch.status, 422, tooMuch.text);
    assert.equal(tooMuch.body.error.code, 'payment_method_not_supported');
    assert.equal(tooMuch.body.error.details.reasonCode, 'amount_above_maximum');
    const receive = await createPayment(p, { intent: 'receive', sourceAccountId: undefined });
    assert.equal(receive.status, 400, receive.text);
    assert.equal(await h.db.prisma.payment.count({ where: { appId: p.cred.appId } }), before);
  });

  test('success: escrow funded, the provider paid principal + fee on chain, payout submitted -> processing -> completed, succeeded with bank_funding.completed', async () => {
    const p = await newParty();
    const atProvider = await fundedAtProvider(p, { metadata: { sandboxPayoutScenario: 'slow_success' } });
    const request = provider.requests.find((r) => r.paymentId === atProvider.id)!;
    assert.equal(request.sandboxScenario, 'slow_success');
    assert.equal(request.amountAtomic, 9_850_000n);
    assert.equal(request.refundAddress.toLowerCase(), atProvider.funding!.depositAddress.address.toLowerCase());
    assert.equal(await tokenBalance(atProvider.settlement.destinationAddress), 9_850_000n, 'the provider got principal + its fee');
    assert.equal(atProvider.status, 'accepted');

    await providerMoves(atProvider.id, 'processing');
    await waitFor(p, atProvider.id, 'processing', (x) => x.offrampStatus === 'processing');
    await providerMoves(atProvider.id, 'completed');
    const done = await waitFor(p, atProvider.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal(done.offrampStatus, 'completed');
    assert.equal(provider.requests.filter((r) => r.paymentId === atProvider.id).length, 1);
    const names = await eventNames(atProvider.id);
    for (const name of ['payment.created', 'payment.processing', 'payment.accepted', 'payment.succeeded', 'bank_funding.completed'])
      assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
    const h = await getHarness();
    const event = await h.db.prisma.event.findFirstOrThrow({ where: { resourceId: atProvider.id, name: 'bank_funding.completed' } });
    assert.deepEqual(
      { ...(event.payload as Record<string, unknown>), statusVersion: undefined },
      {
        ...(event.payload as Record<string, unknown>),
        statusVersion: undefined,
        paymentId: atProvider.id,
        bankAccountId: p.bankAccountId,
        destinationCurrency: 'USD',
        destinationAmount: '9.75',
      },
    );
    const books = await h.db.prisma.$queryRaw<Array<{ book: string; total: string }>>`
      SELECT book, sum(amount_atomic)::text AS total FROM ledger_entries e JOIN ledger_postings lp ON lp.id = e.posting_id
      WHERE lp.source_id = ${atProvider.id} GROUP BY book ORDER BY book`;
    const byBook = new Map(books.map((b) => [b.book, b.total]));
    assert.equal(byBook.get(`escrow:${atProvider.id}`), '0');
    assert.equal(byBook.get(`offramp:${atProvider.id}`), '0');
  });

  test('a callback is a hint: a signed one claiming completed for a payout the provider reports submitted changes nothing; one for a payout the provider reports failed applies failed', async () => {
    const p = await newParty();
    const atProvider = await fundedAtProvider(p);
    const claimed = await postCallback(atProvider.id, 'completed');
    assert.equal(claimed.status, 200, claimed.text);
    const mine = () => handedOn.filter((x) => x.paymentId === atProvider.id);
    assert.deepEqual(
      mine().map((x) => x.status),
      ['submitted'],
      "the provider's answer went on, not the claim",
    );
    assert.equal((await readPayment(p, atProvider.id)).status, 'accepted');

    // The provider fails the payout and says so in a callback whose body still claims processing.
    await providerChanges(atProvider.id, 'failed', 'R03');
    const hinted = await postCallback(atProvider.id, 'processing');
    assert.equal(hinted.status, 200, hinted.text);
    assert.deepEqual(
      mine().map((x) => x.status),
      ['submitted', 'failed'],
    );
    // Had the claimed completed been applied, the Payment would have succeeded and stayed so (a failed
    // update after completed is stale): failed shows it never was.
    const failed = await waitFor(p, atProvider.id, 'failed', (x) => x.status === 'failed' && x.incidentRecoverySummary.count === 1);
    assert.equal(failed.failure?.code, 'provider_failure');
    assert.equal(failed.offrampStatus, 'failed');
    assert.ok(!(await eventNames(atProvider.id)).includes('payment.succeeded'));
  });

  test('a quote already lapsed when the Payment is created answers 409 payment_quote_expired and creates nothing; the identical retry gets the identical refusal', async () => {
    const h = await getHarness();
    const p = await newParty();
    provider.quoteRules.set(14_775_000n, { ttlMs: 0 });
    const key = `lapsed-quote-${process.pid}-${p.bankAccountId}`;
    const body = {
      intent: 'send',
      amount: '15',
      assetCode: 'USDC',
      chainId: 31337,
      sourceAccountId: p.senderId,
      destination: { type: 'bank_account', bankAccountId: p.bankAccountId },
    };
    const send = () => call('/v2/payments', { baseUrl, credential: p.cred, headers: { 'idempotency-key': key }, body });
    const first = await send();
    if (first.status === 201) created.add(first.body.payment.id as string);
    assert.equal(first.status, 409, first.text);
    assert.equal(first.body.error.code, 'payment_quote_expired');
    assert.equal(first.body.error.details.refreshable, false);
    assert.ok(Date.parse(first.body.error.details.quoteExpiresAt) <= Date.now());
    const again = await send();
    assert.equal(again.text, first.text);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(await h.db.prisma.payment.count({ where: { appId: p.cred.appId } }), 0, 'nothing created');
  });

  test('a quote that lapsed before the funds were confirmed fails the Payment with payment_quote_expired; nothing leaves escrow', async () => {
    const p = await newParty();
    provider.quoteRules.set(13_790_000n, { ttlMs: 4000 });
    const created = await createPayment(p, { amount: '14' });
    assert.equal(created.status, 201, created.text);
    const payment = created.body.payment;
    const payer = await newPayer(14_000_000n);
    await payTo(payer, payment.funding.depositAddress.address, 14_000_000n);
    // Seen in time, confirmed (blocks mined) only once the quote has lapsed.
    await eventually(async () => (await readPayment(p, payment.id)).status === 'processing', 'seen', { mine: false });
    const lapsesAt = Date.parse(payment.funding.quoteExpiresAt);
    await until((saw) => (saw(`${lapsesAt - Date.now()} ms to go`), Date.now() > lapsesAt), 'the quote to lapse');
    const failed = await waitFor(p, payment.id, 'failed', (x) => x.status === 'failed');
    assert.equal(failed.failure?.code, 'payment_quote_expired');
    assert.equal(failed.incidentRecoverySummary.requestedAmountAtomic, '14000000');
    assert.equal(await tokenBalance(payment.funding.depositAddress.address), 14_000_000n);
    assert.equal(provider.requests.filter((r) => r.paymentId === payment.id).length, 0);
  });

  test('a sandbox clock moved past the quote while the funds confirm fails the Payment with payment_quote_expired, as a lapse in real time does', async () => {
    const p = await newParty();
    const created = await createPayment(p, { amount: '17' });
    assert.equal(created.status, 201, created.text);
    const payment = created.body.payment;
    const payer = await newPayer(17_000_000n);
    await payTo(payer, payment.funding.depositAddress.address, 17_000_000n);
    await eventually(async () => (await readPayment(p, payment.id)).status === 'processing', 'seen', { mine: false });
    // The quote has minutes to run in real time; its Payment's clock is moved a second past it.
    const seconds = Math.ceil((Date.parse(payment.funding.quoteExpiresAt) - Date.now()) / 1000) + 1;
    assert.ok(seconds > 30, `the quote lapses in ${seconds} s of real time`);
    const moved = await call(`/v2/sandbox/payments/${payment.id}/advance-clock`, {
      baseUrl,
      credential: p.cred,
      headers: { 'idempotency-key': `quote-clock-${payment.id}` },
      body: { seconds },
    });
    assert.equal(moved.status, 200, moved.text);
    const failed = await waitFor(p, payment.id, 'failed', (x) => x.status === 'failed');
    assert.equal(failed.failure?.code, 'payment_quote_expired');
    assert.equal(await tokenBalance(payment.funding.depositAddress.address), 17_000_000n);
    assert.equal(provider.requests.filter((r) => r.paymentId === payment.id).length, 0);
    const names = await eventNames(payment.id);
    assert.ok(names.indexOf('sandbox.clock_advanced') < names.indexOf('payment.failed'), names.join(', '));
    assert.equal(names.filter((n) => n === 'payment.failed').length, 1);
  });
});
