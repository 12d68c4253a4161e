import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AppCredential } from '../../src/domain/apps/apps';
import { verifyClientToken } from '../../src/domain/client-auth/access-tokens';
import { ApiError } from '../../src/domain/requests/errors';
import { confirmClientPayment, readClientPayment } from '../../src/domain/payments/client-payments';
import { call, clientTokenFor, uniqueUserId, type ApiResponse } from '../support/api-client';
import { getHarness, TEST_SERVICE_SECRET } from '../support/harness';
import { newPayer, payTo } from '../support/chain';
import { awaitWorkflowResult } from '../support/workflow-result';
import { newMerchant, newPayment } from '../support/fixtures';
import { activeVault } from '../vaults/support';

/**
 * payment_quote_expired (409): a checkout option's quote is the Payment's own terms (the same asset in
 * and out, no rate) and lapses with the Payment's expiry; it can't be refreshed (refreshable false).
 * Confirm and authorize on a lapsed option answer it, the same way every time.
 */

async function payerToken(cred: AppCredential): Promise<{ accountId: string; token: string }> {
  const created = await call('/v2/accounts', { credential: cred, body: { externalUserId: uniqueUserId('payer') } });
  assert.equal(created.status, 201, created.text);
  const accountId = created.body.account.id as string;
  return { accountId, token: await clientTokenFor(cred, accountId) };
}

/** A Payment whose quote expires in a minute. */
const QUOTED = { amount: '2', expiresInSeconds: 60 };

const bearer = (token: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...extra });
const read = (token: string, p: { id: string; secret: string }) =>
  call(`/v2/client/me/payments/${p.id}`, { headers: bearer(token, { 'x-svc-payment-secret': p.secret }) });

function assertQuoteExpired(res: ApiResponse, quoteExpiresAt: string): void {
  assert.equal(res.status, 409, res.text);
  assert.equal(res.body.error.code, 'payment_quote_expired', res.text);
  assert.deepEqual(res.body.error.details, { quoteExpiresAt, refreshable: false });
}

/** The Payment's workflow expires it (the time-skipping server jumps its timer). */
async function expire(paymentId: string): Promise<void> {
  const h = await getHarness();
  assert.equal(((await awaitWorkflowResult<{ status: string }>(h, paymentId)) as { status: string }).status, 'expired');
}

describe('Client API: payment_quote_expired', () => {
  test("options carry refreshable false and the Payment's expiry as their quote's", async () => {
    const m = await newMerchant();
    const p = await newPayment(m, QUOTED);
    const { token } = await payerToken(m.cred);
    const res = await read(token, p);
    assert.equal(res.status, 200, res.text);
    for (const option of res.body.options) {
      assert.equal(option.refreshable, false);
      assert.equal(option.quoteExpiresAt, p.payment.expiresAt);
    }
  });

  test('confirm on an option whose quote lapsed with the Payment answers 409 payment_quote_expired; the identical request gets the identical refusal, with a key and without', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = await newPayment(m, QUOTED);
    const { token } = await payerToken(m.cred);
    const actionId = (await read(token, p)).body.options[0].execution.actionId as string;
    await expire(p.id);

    const body = { actionId, proof: { type: 'transaction', transactionHash: `0x${'ab'.repeat(32)}` } };
    const key = `lapsed-${process.pid}-${p.id}`;
    const first = await call(`/v2/client/me/payments/${p.id}/confirm`, { headers: bearer(token, { 'idempotency-key': key }), body });
    assertQuoteExpired(first, p.payment.expiresAt);
    const replay = await call(`/v2/client/me/payments/${p.id}/confirm`, { headers: bearer(token, { 'idempotency-key': key }), body });
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.text, first.text);
    const unkeyed = await call(`/v2/client/me/payments/${p.id}/confirm`, { headers: bearer(token), body });
    assert.equal(unkeyed.text, first.text);
    assert.equal((await h.db.prisma.paymentAction.findUniqueOrThrow({ where: { id: actionId } })).usedAt, null, 'nothing used');

    // The option reads as unavailable, with nothing to execute and nothing to refresh.
    const option = (await read(token, p)).body.options[0];
    assert.deepEqual([option.status, option.execution, option.refreshable], ['unavailable', null, false]);
  });

  test('authorize on a Vault option whose quote lapsed answers 409 payment_quote_expired and authorizes nothing', async () => {
    const h = await getHarness();
    const v = await activeVault('100000000');
    await payTo(await newPayer(5_000_000n), v.vault.address, 5_000_000n);
    const m = await newMerchant(v.cred);
    const p = await newPayment(m, QUOTED);
    const token = (await call('/v2/client/auth/exchange', { credential: v.cred, body: { accountId: v.accountId } })).body
      .accessToken as string;
    const option = (await read(token, p)).body.options.find((o: { paymentMethodType: string }) => o.paymentMethodType === 'vault');
    assert.ok(option, 'a Vault option');
    assert.equal(option.refreshable, false);
    await expire(p.id);

    const body = { actionId: option.execution.actionId, proof: { type: 'managed_authorization', authorization: 'approved' } };
    const send = (key: string) =>
      call(`/v2/client/me/payments/${p.id}/options/${option.id}/authorize`, {
        headers: bearer(token, { 'x-svc-payment-secret': p.secret, 'idempotency-key': key }),
        body,
      });
    const first = await send(`lapsed-vault-${p.id}`);
    assertQuoteExpired(first, p.payment.expiresAt);
    assert.equal((await send(`lapsed-vault-${p.id}`)).text, first.text);
    assert.equal((await send(`lapsed-vault-again-${p.id}`)).text, first.text, 'another key, the same refusal');
    assert.equal(await h.db.prisma.vaultFundingOperation.count({ where: { paymentId: p.id } }), 0);
    assert.equal((await h.db.prisma.paymentAction.findUniqueOrThrow({ where: { id: option.execution.actionId } })).usedAt, null);
  });

  test("past the quote's expiry, before the workflow has expired the Payment: the option is unavailable and confirm answers payment_quote_expired", async () => {
    // The clock is the use cases' own argument: this is the service as it answers one second after expiresAt.
    const h = await getHarness();
    const m = await newMerchant();
    const p = await newPayment(m, QUOTED);
    const { token } = await payerToken(m.cred);
    const principal = await verifyClientToken(h.db.prisma, TEST_SERVICE_SECRET, token);
    assert.ok(principal);
    const deps = {
      prisma: h.db.prisma,
      serviceSecret: TEST_SERVICE_SECRET,
      publicBaseUrl: 'http://localhost',
      chains: h.chain.chains,
      environments: h.environments,
      engine: h.engine,
    };
    const actionId = (await readClientPayment(deps, principal, p.id)).options[0]!.execution!.actionId;
    const later = new Date(Date.parse(p.payment.expiresAt) + 1000);

    const lapsed = await readClientPayment(deps, principal, p.id, later);
    assert.equal(lapsed.payment.status, 'requires_payment_method', 'the workflow has not expired it yet');
    assert.deepEqual([lapsed.options[0]!.status, lapsed.options[0]!.execution], ['unavailable', null]);
    const refusal = await confirmClientPayment(
      deps,
      principal,
      p.id,
      { actionId, proof: { type: 'transaction', transactionHash: `0x${'ef'.repeat(32)}` }, metadata: {} },
      later,
    ).then(
      () => assert.fail('confirmed on a lapsed quote'),
      (err: unknown) => err,
    );
    assert.ok(refusal instanceof ApiError);
    assert.deepEqual(refusal.toBody(), {
      error: {
        code: 'payment_quote_expired',
        message: refusal.message,
        details: { quoteExpiresAt: p.payment.expiresAt, refreshable: false },
      },
    });
    assert.equal(refusal.status, 409);
  });
});
