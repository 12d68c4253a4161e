import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ZPaymentResponse } from '../../src/domain/payments/payment.schemas';
import { endsWithBooksChecked } from '../support/books';
import { eventually, newPayer, payTo, tokenBalance } from '../support/chain';
import { apiDepsOnHarness, getHarness, TEST_OFFRAMP_CALLBACK_SECRET } from '../support/harness';
import { harnessOpenApi, responseChecker } from '../support/api-client';
import { listenApi } from '../support/bounded-api';
import { freePort } from '../../src/embedded/process';
import { HttpOfframpProvider } from '../../src/offramp/http-provider';
import { upstreamFamily } from '../../src/http/upstream-codes';
import { eventNames } from '../support/fixtures';
import { BANK_DETAILS, createBankPayment, newBankParty, waitForBankPayment, type BankParty } from './bank-fixtures';

/**
 * Bank payouts against the REAL sandbox provider process (h.provider): quotes, payouts and signed
 * callbacks over HTTP, refunds on chain. The harness API's callback route hands payout callbacks to
 * onPayoutUpdated (the service's own wiring, src/runtime/composition.ts), which signals the Payment's workflow.
 */
/** A party whose bank account is registered with (and verified by) the provider. */
function newParty(): Promise<BankParty> {
  return newBankParty({
    register: async (bankAccountId) => {
      const h = await getHarness();
      const registered = await h.provider.adapter.registerBankAccount({
        bankAccountId,
        country: 'US',
        currency: 'USD',
        accountHolderName: 'Jane Doe',
        beneficiaryType: 'individual',
        bankCode: '021000021',
        accountNumber: '123456789',
        rail: 'ach',
        details: BANK_DETAILS,
      });
      await eventually(
        async () => (await h.provider.adapter.getBankAccount(bankAccountId))?.status === 'verified',
        'bank account verified',
        { mine: false },
      );
      return registered.providerAccountId;
    },
  });
}
const waitFor = waitForBankPayment;

/** A bank Payment created and funded by its sender, with the sandbox scenario given. */
async function funded(p: BankParty, scenario: string) {
  const created = await createBankPayment(p, { metadata: { sandboxPayoutScenario: scenario } });
  assert.equal(created.status, 201, created.text);
  const payment = ZPaymentResponse.parse(created.body).payment;
  const payer = await newPayer(10_000_000n);
  await payTo(payer, payment.funding!.depositAddress.address, 10_000_000n);
  return payment;
}

describe('bank payouts through the sandbox provider', () => {
  endsWithBooksChecked();

  test('succeed: the provider is paid principal + fee on chain, its callbacks move offrampStatus to completed, the Payment succeeds', async () => {
    const h = await getHarness();
    const p = await newParty();
    const feeWallets = [0, 1].map((index) => h.chain.custody.deriveAddress({ purpose: 'fee', index }));
    const before = await Promise.all([h.provider.address, ...feeWallets].map((a) => tokenBalance(a)));
    const payment = await funded(p, 'succeed');
    assert.equal(payment.settlement.destinationAddress, h.provider.address.toLowerCase());
    // 10 USDC less 1.5 % fees = 9.85 to the provider, which keeps 0.50 (its minimum fee).
    assert.equal(payment.funding!.providerPrincipal.amountAtomic, '9350000');
    assert.equal(payment.funding!.providerFee.amountAtomic, '500000');
    const done = await waitFor(p, payment.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal(done.offrampStatus, 'completed');
    const afterwards = await Promise.all([h.provider.address, ...feeWallets].map((a) => tokenBalance(a)));
    // The provider got principal + its fee; the fee wallets the platform (1 %) and partner (0.5 %) fees.
    assert.deepEqual(
      afterwards.map((b, i) => b - before[i]!),
      [9_850_000n, 100_000n, 50_000n],
    );
    const names = await eventNames(payment.id);
    for (const name of ['payment.accepted', 'payment.succeeded', 'bank_funding.completed'])
      assert.ok(names.includes(name), names.join(', '));
  });

  test('fail: the provider sends the money back to escrow; the Payment fails (provider_failure) and the refund is held', async () => {
    const p = await newParty();
    const payment = await funded(p, 'fail');
    const failed = await waitFor(
      p,
      payment.id,
      'failed with the refund held',
      (x) => x.status === 'failed' && x.incidentRecoverySummary.count === 1,
    );
    assert.equal(failed.failure?.code, 'provider_failure');
    assert.equal(failed.offrampStatus, 'failed');
    assert.equal(await tokenBalance(payment.funding!.depositAddress.address), 9_850_000n);
    assert.ok((await eventNames(payment.id)).includes('bank_funding.failed'));
  });

  test('error_5xx and timeout: the payout is asked again with the same key, one payout at the provider, and succeeds', async () => {
    const p = await newParty();
    const first = await funded(p, 'error_5xx');
    const second = await funded(p, 'timeout');
    for (const payment of [first, second]) {
      const done = await waitFor(p, payment.id, 'succeeded', (x) => x.status === 'succeeded');
      assert.equal(done.offrampStatus, 'completed');
    }
  });

  test('uncertain: held (provider_state_uncertain) until the sandbox control resolves it, then it succeeds', async () => {
    const h = await getHarness();
    const p = await newParty();
    const payment = await funded(p, 'uncertain');
    const held = await waitFor(p, payment.id, 'held', (x) => x.operationalState === 'requires_intervention');
    assert.equal(held.operationalReasonCode, 'provider_state_uncertain');
    const resolved = await h.provider.resolvePayout(payment.id, 'completed');
    assert.equal(resolved.status, 200, await resolved.text());
    const done = await waitFor(p, payment.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal(done.operationalState, 'normal');
  });

  test('return after success (sandbox control): still succeeded, payment.settlement_returned, the refund back in escrow', async () => {
    const h = await getHarness();
    const p = await newParty();
    const payment = await funded(p, 'return');
    await waitFor(p, payment.id, 'succeeded', (x) => x.status === 'succeeded');
    const returned = await h.provider.returnPayout(payment.id);
    assert.equal(returned.status, 202, await returned.text());
    const after = await waitFor(
      p,
      payment.id,
      'returned and held',
      (x) => x.offrampStatus === 'returned' && x.incidentRecoverySummary.count === 1,
    );
    assert.equal(after.status, 'succeeded');
    assert.equal(after.operationalReasonCode, 'settlement_returned');
    assert.equal(await tokenBalance(payment.funding!.depositAddress.address), 9_850_000n);
    assert.ok((await eventNames(payment.id)).includes('payment.settlement_returned'));
  });
});

describe('POST /v2/payments answers only the payment family of upstream codes', () => {
  test('provider down (nothing listening): 503 payment_provider_unavailable with Retry-After, creating nothing', async () => {
    const h = await getHarness();
    const down = await listenApi(
      await apiDepsOnHarness({
        engine: h.engine,
        offramp: {
          provider: new HttpOfframpProvider({
            baseUrl: `http://127.0.0.1:${await freePort()}`,
            callbackSecret: TEST_OFFRAMP_CALLBACK_SECRET,
          }),
        },
      }),
    );
    try {
      const p = await newBankParty({ baseUrl: down.baseUrl });
      const res = await createBankPayment(p);
      assert.equal(res.status, 503, res.text);
      assert.equal(res.body.error.code, 'payment_provider_unavailable');
      assert.match(res.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      assert.equal(await h.db.prisma.payment.count({ where: { appId: p.cred.appId } }), 0);
    } finally {
      await down.close();
    }
  });

  test('the sandbox provider refuses the quote (a currency it does not pay out): 502 payment_provider_error, creating nothing', async () => {
    const h = await getHarness();
    const p = await newBankParty();
    await h.db.prisma.bankAccount.update({ where: { id: p.bankAccountId }, data: { currency: 'EUR' } });
    const res = await createBankPayment(p);
    assert.equal(res.status, 502, res.text);
    assert.equal(res.body.error.code, 'payment_provider_error');
    assert.equal(await h.db.prisma.payment.count({ where: { appId: p.cred.appId } }), 0);
  });

  test('the OpenAPI document: a Payment path lists only payment_provider_* at 502 and 503, every other path only provider_*', async () => {
    const doc = await harnessOpenApi();
    const checker = await responseChecker();
    const codesOf = (template: string, method: string, status: string) => {
      const op = checker.operationFor(method, template.replace(/\{[^}]+\}/g, 'x'));
      const response = op?.operation.responses[status] as { $ref?: string } | undefined;
      if (!response) return null;
      const name = response.$ref!.split('/').pop()!;
      const schema = (doc.components!.responses as Record<string, any>)[name].content['application/json'].schema;
      return [...schema.properties.error.properties.code.enum].sort();
    };
    assert.deepEqual(codesOf('/v2/payments', 'POST', '502'), ['payment_provider_error']);
    assert.deepEqual(codesOf('/v2/payments', 'POST', '503'), ['payment_provider_unavailable', 'service_unavailable']);
    assert.deepEqual(codesOf('/v2/accounts/{accountId}/bank-accounts', 'POST', '502'), ['provider_failure']);
    assert.deepEqual(codesOf('/v2/accounts/{accountId}/bank-accounts', 'POST', '503'), ['provider_unavailable', 'service_unavailable']);
    for (const [template, item] of Object.entries(doc.paths ?? {})) {
      const family = upstreamFamily(template);
      for (const method of Object.keys(item as object)) {
        for (const status of ['502', '503']) {
          const codes = codesOf(template, method, status);
          if (!codes) continue;
          const upstream = codes.filter((c) => c !== 'service_unavailable');
          const expected =
            family === 'payment'
              ? status === '502'
                ? ['payment_provider_error']
                : ['payment_provider_unavailable']
              : status === '502'
                ? ['provider_failure']
                : ['provider_unavailable'];
          assert.deepEqual(upstream, expected, `${method.toUpperCase()} ${template} ${status}`);
        }
      }
    }
  });
});
