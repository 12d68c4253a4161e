import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AppCredential } from '../../src/domain/apps/apps';
import { ZAuthorizeVaultOptionResponse, ZClientPaymentResponse } from '../../src/domain/payments/client-payment.schemas';
import { paymentOptionId } from '../../src/domain/payments/payment-options';
import { verifyWebhook } from '../../src/webhooks/verify';
import { call, newApp, uniqueUserId, type ApiResponse } from '../support/api-client';
import { sandboxWithout } from '../support/environments';
import { apiDepsOnHarness, getHarness, TEST_SERVICE_SECRET } from '../support/harness';
import { listenApi } from '../support/bounded-api';
import { eventually, newPayer, payTo, pokeScanner, tokenBalance } from '../support/chain';
import { assertLedgerBalanced, createPayment, newMerchant, waitForPayment, type Merchant, newPayment } from '../support/fixtures';
import { activeVault } from '../vaults/support';
import { delivered, dispatch, webhookTestbed } from '../webhooks/support/flow';

const USDC = (n: number) => BigInt(n) * 1_000_000n;
let keys = 0;
const newKey = () => `authorize-${process.pid}-${(keys += 1)}`;

interface Payer {
  cred: AppCredential;
  accountId: string;
  vault: { id: string; address: string };
  token: string;
  merchant: Merchant;
}

/** A payer with an active vault (limit), holding `funded` on chain, a client token, and a merchant of the same app. */
async function payerWithVault(limitAtomic: bigint, funded: bigint): Promise<Payer> {
  const v = await activeVault(limitAtomic.toString());
  if (funded > 0n) await payTo(await newPayer(funded), v.vault.address, funded);
  const exchanged = await call('/v2/client/auth/exchange', { credential: v.cred, body: { accountId: v.accountId } });
  assert.equal(exchanged.status, 200, exchanged.text);
  return { cred: v.cred, accountId: v.accountId, vault: v.vault, token: exchanged.body.accessToken, merchant: await newMerchant(v.cred) };
}

const headersFor = (token: string, secret?: string, key?: string) => ({
  authorization: `Bearer ${token}`,
  ...(secret === undefined ? {} : { 'x-svc-payment-secret': secret }),
  ...(key === undefined ? {} : { 'idempotency-key': key }),
});

async function readOptions(p: Payer, payment: { id: string; secret: string }) {
  const res = await call(`/v2/client/me/payments/${payment.id}`, { headers: headersFor(p.token, payment.secret) });
  assert.equal(res.status, 200, res.text);
  ZClientPaymentResponse.parse(res.body);
  return res.body.options as Array<{
    id: string;
    paymentMethodType: string;
    status: string;
    execution: { actionId: string; type: string } | null;
  }>;
}

async function vaultOptionOf(p: Payer, payment: { id: string; secret: string }) {
  const option = (await readOptions(p, payment)).find((o) => o.paymentMethodType === 'vault');
  assert.ok(option, 'a Vault option is offered');
  return option;
}

const approved = { type: 'managed_authorization', authorization: 'approved' };

function authorize(
  p: Payer,
  payment: { id: string; secret?: string },
  optionId: string,
  body: unknown,
  key: string | null = newKey(),
  opts: { baseUrl?: string; token?: string } = {},
): Promise<ApiResponse> {
  return call(`/v2/client/me/payments/${payment.id}/options/${optionId}/authorize`, {
    baseUrl: opts.baseUrl,
    headers: headersFor(opts.token ?? p.token, payment.secret, key ?? undefined),
    body,
  });
}

/** Waits until the vault-funded Payments have succeeded (settled, fees paid): no money moves after the test. */
async function settled(p: Payer, payments: Array<{ id: string }>) {
  for (const payment of payments) {
    await pokeScanner();
    await waitForPayment(p.merchant, payment.id, 'succeeded', (x) => x.status === 'succeeded');
  }
}

function assertError(res: ApiResponse, status: number, code: string, reasonCode?: string) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.error.code, code, res.text);
  if (reasonCode) assert.equal(res.body.error.details?.reasonCode, reasonCode, res.text);
}

describe('Authorize a Vault funding operation (client)', () => {
  const bed = webhookTestbed();

  test('end to end on anvil: the Vault option, authorize, vault → escrow on chain, the Payment succeeds by its own verification, signed vault.* and payment.* webhooks, balanced books', async () => {
    const h = await getHarness();
    const p = await payerWithVault(USDC(100), USDC(40));
    const [admin, receiver] = [bed.admin(), bed.receiver()];
    const hook = receiver.hook([]);
    const ep = await admin.call('POST', `/admin/v1/apps/${p.cred.appId}/webhook-endpoints`, {
      url: hook.url,
      events: ['vault.funding_posted', 'payment.succeeded'],
    });
    assert.equal(ep.status, 201, JSON.stringify(ep.body));
    const payment = await newPayment(p.merchant, { amount: '12.5' });

    const option = await vaultOptionOf(p, payment);
    assert.equal(option.id, paymentOptionId(TEST_SERVICE_SECRET, payment.id, 'vault'));
    assert.equal(option.status, 'available');
    assert.equal(option.execution?.type, 'managed_authorization');
    const key = newKey();
    const body = { actionId: option.execution!.actionId, proof: approved, metadata: { orderRef: 'A-1' } };
    const res = await authorize(p, payment, option.id, body, key);
    assert.equal(res.status, 200, res.text);
    const answer = ZAuthorizeVaultOptionResponse.parse(res.body);
    assert.equal(answer.paymentId, payment.id);
    assert.match(answer.fundingOperation.id, /^pay_funding_[A-Za-z0-9_-]+$/);
    assert.equal(answer.fundingOperation.commercialFeeMode, 'parent_payment');
    assert.ok(['authorized', 'broadcast'].includes(answer.fundingOperation.status));
    assert.equal(answer.option.id, option.id);
    assert.equal(answer.option.execution, null, 'the action is spent');
    assert.equal(answer.option.selectionStatus, 'selected');

    // The same key and body replay the answer; the same key with another body is a conflict.
    const replay = await authorize(p, payment, option.id, body, key);
    assert.equal(replay.status, 200);
    assert.deepEqual(replay.body, res.body);
    assertError(await authorize(p, payment, option.id, { ...body, metadata: { orderRef: 'A-2' } }, key), 409, 'idempotency_conflict');
    // The action is single use.
    assertError(await authorize(p, payment, option.id, body), 409, 'conflict', 'action_already_used');

    await eventually(
      async () => ((await tokenBalance(payment.payment.funding.depositAddress.address)) >= 12_500_000n ? true : undefined),
      'the vault paid the escrow',
    );
    await pokeScanner();
    await waitForPayment(p.merchant, payment.id, 'succeeded', (x) => x.status === 'succeeded');
    const op = await eventually(async () => {
      const row = await h.db.prisma.vaultFundingOperation.findUniqueOrThrow({ where: { id: answer.fundingOperation.id } });
      return row.status === 'confirmed' ? row : undefined;
    }, 'funding confirmed');
    assert.ok(op.transactionHash && op.broadcastAt && op.confirmedAt);
    assert.equal(await tokenBalance(p.vault.address), USDC(40) - 12_500_000n);
    assert.equal((await vaultOptionOf(p, payment)).status, 'completed');

    const posted = await h.db.prisma.event.findFirstOrThrow({ where: { resourceId: p.vault.id, name: 'vault.funding_posted' } });
    const succeeded = await h.db.prisma.event.findFirstOrThrow({ where: { resourceId: payment.id, name: 'payment.succeeded' } });
    await dispatch();
    for (const event of [posted, succeeded]) {
      const endpointId = ep.body.endpoint.id as string;
      assert.equal((await delivered(event.id, endpointId)).status, 'succeeded');
      const req = receiver.requests(hook.path).find((r) => r.headers['x-svc-event-id'] === event.id);
      assert.ok(req, `${event.name} delivered`);
      assert.equal(verifyWebhook(req.rawBody, req.headers, ep.body.signingSecret).name, event.name);
    }
    await assertLedgerBalanced();
  });

  test('every rule of the table: headers, path patterns, body, the option kind, the spend limit', async () => {
    const p = await payerWithVault(USDC(10), USDC(30));
    const payment = await newPayment(p.merchant, { amount: '4' });
    const option = await vaultOptionOf(p, payment);
    const body = { actionId: option.execution!.actionId, proof: approved };
    const path = `/v2/client/me/payments/${payment.id}/options/${option.id}/authorize`;

    // Authentication: the bearer token and this Payment's secret.
    assertError(
      await call(path, { headers: { 'x-svc-payment-secret': payment.secret, 'idempotency-key': newKey() }, body }),
      401,
      'unauthorized',
    );
    assertError(await authorize(p, { id: payment.id }, option.id, body), 401, 'unauthorized');
    const other = await newPayment(p.merchant, { amount: '1' });
    assertError(await authorize(p, { id: payment.id, secret: other.secret }, option.id, body), 401, 'unauthorized');
    // Idempotency-Key: required, 1-256 printable ASCII.
    assertError(await authorize(p, payment, option.id, body, null), 400, 'bad_request');
    assertError(await authorize(p, payment, option.id, body, 'k'.repeat(257)), 400, 'bad_request');
    // Path patterns.
    assertError(await authorize(p, { id: 'pay_123', secret: payment.secret }, option.id, body), 400, 'bad_request');
    assertError(await authorize(p, payment, 'option_123', body), 400, 'bad_request');
    // Body: actionId 1-128, the managed approval's proof exactly, metadata within its limits, nothing else.
    for (const bad of [
      { ...body, actionId: '' },
      { ...body, actionId: 'a'.repeat(129) },
      { ...body, proof: { type: 'managed_authorization', authorization: 'denied' } },
      { ...body, proof: { type: 'transaction', transactionHash: `0x${'1'.repeat(64)}` } },
      { ...body, metadata: { a: { b: { c: { d: 1 } } } } },
      { ...body, metadata: { s: 'x'.repeat(513) } },
      { ...body, metadata: { s: 'nul\u0000' } },
      { ...body, extra: true },
      { proof: approved },
    ]) {
      const res = await authorize(p, payment, option.id, bad);
      assert.equal(res.status, 400, `${JSON.stringify(bad)}: ${res.text}`);
      assert.equal(res.body.error.code, 'bad_request');
    }
    // The direct option is confirmed, not authorized; an option of another Payment is not found.
    assertError(
      await authorize(p, payment, paymentOptionId(TEST_SERVICE_SECRET, payment.id, 'wallet_transfer'), body),
      422,
      'payment_method_not_supported',
    );
    assertError(await authorize(p, payment, paymentOptionId(TEST_SERVICE_SECRET, other.id, 'vault'), body), 404, 'not_found');
    // An action id of another option or another payer is not found; nothing was used by all of the above.
    assertError(await authorize(p, payment, option.id, { ...body, actionId: 'action_unknown' }), 404, 'not_found');
    const ok = await authorize(p, payment, option.id, body);
    assert.equal(ok.status, 200, ok.text);
    await settled(p, [payment]);

    // The policy's limit (10 USDC per period): 4 authorized, 7 more is over it.
    const big = await newPayment(p.merchant, { amount: '7' });
    const bigOption = await readOptions(p, big);
    assert.equal(
      bigOption.some((o) => o.paymentMethodType === 'vault'),
      false,
      'no Vault option over the limit',
    );
    assertError(
      await authorize(p, big, paymentOptionId(TEST_SERVICE_SECRET, big.id, 'vault'), { actionId: 'action_none', proof: approved }),
      404,
      'not_found',
    );
  });

  test('an environment without vaults answers 424 chain_config_missing; a payer without a vault sees no Vault option', async () => {
    const h = await getHarness();
    const p = await payerWithVault(USDC(10), USDC(10));
    const payment = await newPayment(p.merchant, { amount: '1' });
    const option = await vaultOptionOf(p, payment);
    const noVaults = sandboxWithout(h.environments, 'vaults');
    const api = await listenApi(await apiDepsOnHarness({ environments: noVaults, chains: h.chain.chains, client: { engine: h.engine } }));
    try {
      const res = await authorize(p, payment, option.id, { actionId: option.execution!.actionId, proof: approved }, newKey(), {
        baseUrl: api.baseUrl,
      });
      assertError(res, 424, 'chain_config_missing');
    } finally {
      await api.close();
    }
    // An account without a vault, the payer of another Payment: no Vault option for it.
    const bare = (await call('/v2/accounts', { credential: p.cred, body: { externalUserId: uniqueUserId('no-vault') } })).body.account
      .id as string;
    const bareToken = await call('/v2/client/auth/exchange', { credential: p.cred, body: { accountId: bare } });
    const asBare = { ...p, accountId: bare, token: bareToken.body.accessToken as string };
    assert.deepEqual(
      (await readOptions(asBare, await newPayment(p.merchant, { amount: '1' }))).map((o) => o.paymentMethodType),
      ['wallet_transfer'],
    );
  });

  test('an app without the v2:vaults scope is answered 403 forbidden before its Idempotency-Key is claimed, and is offered no Vault option', async () => {
    const h = await getHarness();
    const p = await payerWithVault(USDC(10), USDC(10));
    const payment = await newPayment(p.merchant, { amount: '1' });
    const option = await vaultOptionOf(p, payment);
    // The app's credential no longer holds v2:vaults: client tokens are checked against the app on every call.
    await h.db.prisma.app.update({ where: { id: p.cred.appId }, data: { scopes: ['v2:accounts', 'v2:deposit_addresses', 'v2:payments'] } });
    const key = newKey();
    for (const body of [
      { actionId: option.execution!.actionId, proof: approved },
      { actionId: '', proof: 'not even a proof' },
    ]) {
      const res = await authorize(p, payment, option.id, body, key);
      assertError(res, 403, 'forbidden');
      assert.deepEqual(res.body.error.details, { requiredScope: 'v2:vaults' });
    }
    assert.equal(
      await h.db.prisma.idempotencyRecord.count({ where: { appId: p.cred.appId, key: { endsWith: `:${key}` } } }),
      0,
      'the key was never claimed',
    );
    assert.equal(await h.db.prisma.vaultFundingOperation.count({ where: { paymentId: payment.id } }), 0);
    assert.equal((await h.db.prisma.paymentAction.findUniqueOrThrow({ where: { id: option.execution!.actionId } })).usedAt, null);
    // The read (v2:payments) still serves the payer, without a Vault option it could not authorize.
    assert.deepEqual(
      (await readOptions(p, payment)).map((o) => o.paymentMethodType),
      ['wallet_transfer'],
    );
    // Nor does the hosted checkout offer it.
    const session = await fetch(`${h.baseUrl}/checkout/${payment.id}/session`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientToken: p.token, clientSecret: payment.secret }),
    });
    assert.equal(session.status, 303);
    const cookie = session.headers.get('set-cookie')!.split(';')[0]!;
    const vault = (await (await fetch(`${h.baseUrl}/checkout/${payment.id}/vault`, { headers: { cookie } })).json()) as {
      state: string;
      csrfToken: string;
    };
    assert.equal(vault.state, 'none');
    const pay = await fetch(`${h.baseUrl}/checkout/${payment.id}/vault/authorize`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': vault.csrfToken },
    });
    assert.equal(((await pay.json()) as { state: string }).state, 'none');
    assert.equal(await h.db.prisma.vaultFundingOperation.count({ where: { paymentId: payment.id } }), 0);
  });

  test('an app created without v2:vaults: authorize is 403 forbidden, whatever option it names', async () => {
    const cred = await newApp({ scopes: ['v2:accounts', 'v2:payments'] });
    const merchant = await newMerchant(cred);
    const created = await createPayment(merchant, { amount: '1' });
    assert.equal(created.status, 201, created.text);
    const payment = { id: created.body.payment.id as string, secret: created.body.checkout.clientSecret as string };
    const payerId = (await call('/v2/accounts', { credential: cred, body: { externalUserId: uniqueUserId('payer') } })).body.account
      .id as string;
    const token = (await call('/v2/client/auth/exchange', { credential: cred, body: { accountId: payerId } })).body.accessToken as string;
    const p = { cred, accountId: payerId, token, merchant, vault: { id: '', address: '' } };
    assert.equal(
      (await call(`/v2/client/me/payments/${payment.id}`, { headers: headersFor(token, payment.secret) })).status,
      200,
      'the payer reads it',
    );
    const res = await authorize(p, payment, paymentOptionId(TEST_SERVICE_SECRET, payment.id, 'vault'), {
      actionId: 'action_none',
      proof: approved,
    });
    assertError(res, 403, 'forbidden');
  });

  test('an app whose credential lost v2:payments: the client read, confirm and the checkout session answer 403 forbidden', async () => {
    const h = await getHarness();
    const p = await payerWithVault(USDC(10), USDC(10));
    const payment = await newPayment(p.merchant, { amount: '1' });
    await h.db.prisma.app.update({ where: { id: p.cred.appId }, data: { scopes: ['v2:accounts', 'v2:vaults'] } });
    const read = await call(`/v2/client/me/payments/${payment.id}`, { headers: headersFor(p.token, payment.secret) });
    assertError(read, 403, 'forbidden');
    assert.deepEqual(read.body.error.details, { requiredScope: 'v2:payments' });
    const confirm = await call(`/v2/client/me/payments/${payment.id}/confirm`, {
      headers: headersFor(p.token),
      body: { actionId: 'action_none', proof: { type: 'transaction', transactionHash: `0x${'ab'.repeat(32)}` } },
    });
    assertError(confirm, 403, 'forbidden');
    assertError(
      await authorize(p, payment, paymentOptionId(TEST_SERVICE_SECRET, payment.id, 'vault'), { actionId: 'action_none', proof: approved }),
      403,
      'forbidden',
    );
    const session = await fetch(`${h.baseUrl}/checkout/${payment.id}/session`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientToken: p.token, clientSecret: payment.secret }),
    });
    assert.equal(session.status, 403);
    assert.equal(session.headers.get('set-cookie'), null);
    assert.equal(await h.db.prisma.paymentPayer.count({ where: { paymentId: payment.id } }), 0, 'no one was bound');
  });

  test('an authorize whose workflow start failed holds nothing for ever: the same request again completes it, and the reconciliation pass starts one left alone', async () => {
    const h = await getHarness();
    const p = await payerWithVault(USDC(100), USDC(20));
    // The workflow engine is away when the action has been used and the start is asked for.
    // As the Temporal client raises it (a ServiceError around the gRPC status), without importing the client.
    const grpc = Object.assign(new Error('14 UNAVAILABLE: connection refused'), { code: 14, details: 'connection refused', metadata: {} });
    const unavailable = () => Object.assign(new Error('Failed to start Workflow', { cause: grpc }), { name: 'ServiceError' });
    const down = { ...h.engine, startVaultFunding: async () => Promise.reject(unavailable()) };
    const api = await listenApi(await apiDepsOnHarness({ chains: h.chain.chains, client: { engine: down } }));
    const [retried, abandoned] = [await newPayment(p.merchant, { amount: '3' }), await newPayment(p.merchant, { amount: '4' })];
    try {
      for (const payment of [retried, abandoned]) {
        const option = await vaultOptionOf(p, payment);
        const body = { actionId: option.execution!.actionId, proof: approved };
        const key = newKey();
        const failed = await authorize(p, payment, option.id, body, key, { baseUrl: api.baseUrl });
        assert.equal(failed.status, 503, failed.text);
        if (payment === retried) {
          // The client retries as the 503 asks: the same key and body, once the engine is back.
          const again = await authorize(p, payment, option.id, body, key);
          assert.equal(again.status, 200, again.text);
          assert.equal(
            ZAuthorizeVaultOptionResponse.parse(again.body).fundingOperation.id,
            (await h.db.prisma.vaultFundingOperation.findFirstOrThrow({ where: { paymentId: payment.id } })).id,
          );
        }
      }
    } finally {
      await api.close();
    }
    // The abandoned one: no one asks again; the reconciliation pass starts its workflow.
    const pass = await h.engine.runPaymentReconciliation({ graceSeconds: 3600 });
    assert.ok((pass.vaultReceipts?.funding?.started ?? 0) >= 1, JSON.stringify(pass.vaultReceipts));
    await settled(p, [retried, abandoned]);
    for (const payment of [retried, abandoned]) {
      const op = await eventually(async () => {
        const row = await h.db.prisma.vaultFundingOperation.findFirstOrThrow({ where: { paymentId: payment.id } });
        return row.status === 'confirmed' ? row : undefined;
      }, `the funding of ${payment.id} confirmed`);
      assert.ok(op.transactionHash);
    }
    assert.equal(await tokenBalance(p.vault.address), USDC(20) - 7_000_000n);
    assert.equal(
      await h.db.prisma.vaultFundingOperation.count({ where: { accountId: p.accountId, status: { in: ['authorized', 'broadcast'] } } }),
      0,
      'nothing reserved',
    );
  });

  test('an authorize answered 503 whose funding the reconciliation pass then started: the same-key retry answers that funding, it is sent once, and another request under the key is refused', async () => {
    const h = await getHarness();
    const p = await payerWithVault(USDC(100), USDC(20));
    const grpc = Object.assign(new Error('14 UNAVAILABLE: connection refused'), { code: 14, details: 'connection refused', metadata: {} });
    const unavailable = () => Object.assign(new Error('Failed to start Workflow', { cause: grpc }), { name: 'ServiceError' });
    const down = await listenApi(
      await apiDepsOnHarness({
        chains: h.chain.chains,
        client: { engine: { ...h.engine, startVaultFunding: async () => Promise.reject(unavailable()) } },
      }),
    );
    const payment = await newPayment(p.merchant, { amount: '3' });
    const option = await vaultOptionOf(p, payment);
    const body = { actionId: option.execution!.actionId, proof: approved, metadata: { orderRef: 'R-1' } };
    const key = newKey();
    try {
      assertError(await authorize(p, payment, option.id, body, key, { baseUrl: down.baseUrl }), 503, 'payment_provider_unavailable');
    } finally {
      await down.close();
    }
    const op = await h.db.prisma.vaultFundingOperation.findFirstOrThrow({ where: { paymentId: payment.id } });
    // Another request under the released key, or this one under another key: never the funding the key made.
    assertError(await authorize(p, payment, option.id, { ...body, metadata: { orderRef: 'R-2' } }, key), 409, 'idempotency_conflict');
    assertError(await authorize(p, payment, option.id, body), 409, 'conflict', 'action_already_used');
    // The pass starts the orphan before the client retries (what a partner saw answered 409 action_already_used).
    const pass = await h.engine.runPaymentReconciliation({ graceSeconds: 3600 });
    assert.ok((pass.vaultReceipts?.funding?.started ?? 0) >= 1, JSON.stringify(pass.vaultReceipts));

    const starts: string[] = [];
    const counting = {
      ...h.engine,
      async startVaultFunding(id: string, confirmations: number) {
        const outcome = await h.engine.startVaultFunding(id, confirmations);
        starts.push(`${id}:${outcome}`);
        return outcome;
      },
    };
    const up = await listenApi(await apiDepsOnHarness({ chains: h.chain.chains, client: { engine: counting } }));
    try {
      const again = await authorize(p, payment, option.id, body, key, { baseUrl: up.baseUrl });
      assert.equal(again.status, 200, again.text);
      assert.equal(again.headers.get('idempotent-replayed'), null);
      const answered = ZAuthorizeVaultOptionResponse.parse(again.body);
      assert.equal(answered.fundingOperation.id, op.id);
      assert.equal(answered.option.status, 'processing');
      assert.ok(!starts.includes(`${op.id}:started`), `the workflow was started once, by the pass: ${starts.join(', ')}`);
      const replay = await authorize(p, payment, option.id, body, key, { baseUrl: up.baseUrl });
      assert.equal(replay.status, 200, replay.text);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(replay.body, again.body);
    } finally {
      await up.close();
    }
    await settled(p, [payment]);
    const done = await eventually(async () => {
      const row = await h.db.prisma.vaultFundingOperation.findUniqueOrThrow({ where: { id: op.id } });
      return row.status === 'confirmed' ? row : undefined;
    }, `the funding ${op.id} confirmed`);
    assert.ok(done.transactionHash);
    assert.equal(await h.db.prisma.vaultFundingOperation.count({ where: { paymentId: payment.id } }), 1);
    assert.equal(await h.db.prisma.settlementLeg.count({ where: { sourceId: op.id, status: 'confirmed' } }), 1, 'sent once');
    assert.equal(await tokenBalance(p.vault.address), USDC(20) - USDC(3));
    await assertLedgerBalanced();
  });

  test('20 concurrent authorizations against one vault never exceed its limit per period', async () => {
    const p = await payerWithVault(USDC(50), USDC(200));
    const payments = [];
    for (let i = 0; i < 20; i += 1) payments.push(await newPayment(p.merchant, { amount: '5' }));
    const options = await Promise.all(payments.map((payment) => vaultOptionOf(p, payment)));
    const answers = await Promise.all(
      payments.map((payment, i) => authorize(p, payment, options[i]!.id, { actionId: options[i]!.execution!.actionId, proof: approved })),
    );
    const ok = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status !== 200);
    assert.equal(ok.length, 10, answers.map((r) => r.status).join(','));
    for (const r of refused) assertError(r, 422, 'payment_method_not_supported', 'vault_spend_limit_exceeded');
    const ids = new Set(ok.map((r) => ZAuthorizeVaultOptionResponse.parse(r.body).fundingOperation.id));
    assert.equal(ids.size, 10, 'one funding operation per authorized Payment');
    await settled(
      p,
      payments.filter((_, i) => answers[i]!.status === 200),
    );
    assert.equal(await tokenBalance(p.vault.address), USDC(150));
  });
});

describe('Vault audit: who authorized, as the partner sees it', () => {
  test("a payer's authorize is actor client with the payer's account id (not the partner's app credentials); the partner's calls are partner_app, the service's own steps service", async () => {
    const p = await payerWithVault(USDC(100), USDC(20));
    const payment = await newPayment(p.merchant, { amount: '5' });
    const option = await vaultOptionOf(p, payment);
    const res = await authorize(p, payment, option.id, { actionId: option.execution!.actionId, proof: approved });
    assert.equal(res.status, 200, res.text);
    await settled(p, [payment]);

    // The funding is posted by its own workflow's check at the confirmation depth, which can come after
    // the Payment (another workflow) has settled: wait for it.
    const events = await eventually(async (saw) => {
      const audit = await call(`/v2/accounts/${p.accountId}/vault/audit-events?limit=100`, { credential: p.cred });
      assert.equal(audit.status, 200, audit.text);
      const data = audit.body.data as Array<{
        eventType: string;
        actor: { type: string; id: string | null };
        payload: Record<string, unknown>;
      }>;
      saw(data.map((e) => e.eventType));
      return data.some((e) => e.eventType === 'vault.funding_posted') ? data : undefined;
    }, 'the vault funding posted');
    const authorized = events.filter((e) => e.eventType === 'vault.funding.authorized');
    assert.equal(authorized.length, 1);
    assert.deepEqual(authorized[0]!.actor, { type: 'client', id: p.accountId });
    assert.equal(authorized[0]!.payload.paymentId, payment.id);
    assert.deepEqual(events.find((e) => e.eventType === 'vault.funding_posted')?.actor, { type: 'service', id: null });
    // partner_app only where the partner's app credentials made the call (create, policy, approval).
    const byPartner = events.filter((e) => e.actor.type === 'partner_app');
    assert.ok(byPartner.some((e) => e.eventType === 'vault.created'));
    for (const e of byPartner) {
      assert.equal(e.actor.id, p.cred.appId, e.eventType);
      assert.match(e.eventType, /^vault\.(created|policy)/, e.eventType);
    }

    // The document names each actor type (the answer above was checked against it by call()).
    const doc = (await call('/v2/openapi/partners.json')).body;
    const list = doc.paths['/v2/accounts/{accountId}/vault/audit-events'].get.responses['200'].content['application/json'].schema;
    const actorType = list.properties.data.items.properties.actor.properties.type;
    assert.deepEqual(actorType.enum, ['partner_app', 'service', 'client']);
    assert.match(actorType.description, /partner_app/);
  });
});
