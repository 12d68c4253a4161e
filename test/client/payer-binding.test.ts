import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { AppCredential } from '../../src/domain/apps/apps';
import { clientSecretFor } from '../../src/domain/payments/payment-view';
import { paymentOptionId } from '../../src/domain/payments/payment-options';
import { sealText } from '../../src/domain/keys/sealed-text';
import { call, clientTokenFor, uniqueUserId, type ApiResponse } from '../support/api-client';
import { getHarness, TEST_SERVICE_SECRET } from '../support/harness';
import { newPayer, payTo } from '../support/chain';
import { newMerchant, newPayment, newAccount, newVault } from '../support/fixtures';
import { activeVault, requestCode, uniqueEmail } from '../vaults/support';

/**
 * The client API binds a receive Payment to the first account (other than its recipient) whose client
 * token reads it. Every other account is answered exactly as for a Payment that does not exist, so
 * the answer says nothing about the Payment: same status, code, message and body.
 */

/** A Payment id in the right shape that no one created, with the secret the service would derive for it. */
function unknownPayment() {
  const id = `payment_unknown${uniqueUserId('x').replace(/[^A-Za-z0-9]/g, '')}`;
  return { id, secret: clientSecretFor(TEST_SERVICE_SECRET, id) };
}

const bearer = (token: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...extra });
const hash = `0x${'ab'.repeat(32)}`;
const approved = { type: 'managed_authorization', authorization: 'approved' };
let keys = 0;

const read = (token: string, p: { id: string; secret: string }) =>
  call(`/v2/client/me/payments/${p.id}`, { headers: bearer(token, { 'x-svc-payment-secret': p.secret }) });
const confirm = (token: string, p: { id: string }, actionId = 'action_none') =>
  call(`/v2/client/me/payments/${p.id}/confirm`, {
    headers: bearer(token),
    body: { actionId, proof: { type: 'transaction', transactionHash: hash } },
  });
const authorize = (token: string, p: { id: string; secret: string }, actionId = 'action_none') =>
  call(`/v2/client/me/payments/${p.id}/options/${paymentOptionId(TEST_SERVICE_SECRET, p.id, 'vault')}/authorize`, {
    headers: bearer(token, { 'x-svc-payment-secret': p.secret, 'idempotency-key': `binding-${process.pid}-${(keys += 1)}` }),
    body: { actionId, proof: approved },
  });

type Act = 'read' | 'confirm' | 'authorize';
const act = (what: Act, token: string, p: { id: string; secret: string }) =>
  what === 'read' ? read(token, p) : what === 'confirm' ? confirm(token, p) : authorize(token, p);

/** What the client API answers for a Payment that does not exist, per call. */
async function notFoundAnswers(token: string): Promise<Record<Act, { status: number; body: unknown }>> {
  const u = unknownPayment();
  const out = {} as Record<Act, { status: number; body: unknown }>;
  for (const what of ['read', 'confirm', 'authorize'] as const) {
    const res = await act(what, token, u);
    out[what] = { status: res.status, body: res.body };
  }
  assert.equal(out.read.status, 404, JSON.stringify(out.read));
  return out;
}

function assertNotFound(res: ApiResponse, expected: { status: number; body: unknown }, what: string): void {
  assert.equal(res.status, expected.status, `${what}: ${res.text}`);
  assert.deepEqual(res.body, expected.body, what);
}

async function payerOf(paymentId: string): Promise<string | null> {
  const h = await getHarness();
  return (await h.db.prisma.paymentPayer.findUnique({ where: { paymentId } }))?.accountId ?? null;
}

/** A second payer with an active, funded vault in an app that already has one (activeVault makes a new app). */
async function fundedVaultIn(cred: AppCredential): Promise<string> {
  const v = await newVault(cred);
  const email = uniqueEmail();
  const code = await requestCode(cred, v.accountId, email, '100000000');
  const ok = await call(`/v2/accounts/${v.accountId}/vault/policy/approval/verify`, { credential: cred, body: { code } });
  assert.equal(ok.status, 200, ok.text);
  await payTo(await newPayer(10_000_000n), ok.body.vault.address, 10_000_000n);
  return v.accountId;
}

describe('Client API: a Payment binds to its first payer', () => {
  test("the first account to read a Payment is its payer; other accounts and the recipient get the unknown Payment's 404 on read, options, confirm and authorize", async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = await newPayment(m, { amount: '2' });
    const alice = await newAccount(m.cred);
    const [aliceToken, bobToken, recipientToken] = [
      await clientTokenFor(m.cred, alice),
      await clientTokenFor(m.cred, await newAccount(m.cred)),
      await clientTokenFor(m.cred, m.accountId),
    ];
    const missing = await notFoundAnswers(bobToken);
    assert.deepEqual(missing.read.body, { error: { code: 'not_found', message: 'Payment not found' } });

    // The recipient can't pay its own receive Payment: it is not bound, and gets the 404.
    assertNotFound(await read(recipientToken, p), missing.read, 'the recipient reads');
    assert.equal(await payerOf(p.id), null, 'the recipient is never the payer');

    const first = await read(aliceToken, p);
    assert.equal(first.status, 200, first.text);
    assert.equal(await payerOf(p.id), alice);
    const aliceAction = first.body.options[0].execution.actionId as string;

    for (const [token, who] of [
      [bobToken, 'another account'],
      [recipientToken, 'the recipient'],
    ] as const) {
      assertNotFound(await read(token, p), missing.read, `${who} reads`);
      assertNotFound(await confirm(token, p), missing.confirm, `${who} confirms`);
      assertNotFound(await confirm(token, p, aliceAction), missing.confirm, `${who} confirms with the payer's action`);
      assertNotFound(await authorize(token, p), missing.authorize, `${who} authorizes`);
    }
    // Nothing was issued to the others: the options (and their action ids) are the payer's alone.
    assert.deepEqual(
      (await h.db.prisma.paymentAction.findMany({ where: { paymentId: p.id }, select: { accountId: true } })).map((a) => a.accountId),
      [alice],
    );
    // The payer is still served, and its action is still unused.
    assert.equal((await read(aliceToken, p)).status, 200);
    assert.equal((await h.db.prisma.paymentAction.findUniqueOrThrow({ where: { id: aliceAction } })).usedAt, null);
  });

  test('confirm and authorize on a Payment no account has read yet get the 404 and bind no one', async () => {
    const m = await newMerchant();
    const p = await newPayment(m, { amount: '2' });
    const token = await clientTokenFor(m.cred, await newAccount(m.cred));
    const missing = await notFoundAnswers(token);
    assertNotFound(await confirm(token, p), missing.confirm, 'confirm');
    assertNotFound(await authorize(token, p), missing.authorize, 'authorize');
    assert.equal(await payerOf(p.id), null);
  });

  test('accounts reading a Payment at once: exactly one becomes its payer, the others get the 404', async () => {
    const m = await newMerchant();
    const p = await newPayment(m, { amount: '2' });
    const accounts = await Promise.all(Array.from({ length: 6 }, () => newAccount(m.cred)));
    const tokens = await Promise.all(accounts.map((a) => clientTokenFor(m.cred, a)));
    const missing = await notFoundAnswers(tokens[0]!);
    const answers = await Promise.all(tokens.map((t) => read(t, p)));
    const served = answers.flatMap((a, i) => (a.status === 200 ? [accounts[i]] : []));
    assert.equal(served.length, 1, answers.map((a) => a.status).join(','));
    for (const a of answers.filter((x) => x.status !== 200)) assertNotFound(a, missing.read, 'a losing reader');
    assert.equal(await payerOf(p.id), served[0]);
  });

  test('property: whatever accounts act on one Payment, in any order, only its first reader (not the recipient) ever gets an answer other than the 404', async () => {
    const m = await newMerchant();
    const payers = await Promise.all([0, 1, 2].map(() => newAccount(m.cred)));
    const who = [...payers, m.accountId];
    const tokens = await Promise.all(who.map((a) => clientTokenFor(m.cred, a)));
    const missing = await notFoundAnswers(tokens[0]!);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ account: fc.nat({ max: who.length - 1 }), what: fc.constantFrom<Act>('read', 'confirm', 'authorize') }), {
          minLength: 1,
          maxLength: 7,
        }),
        async (steps) => {
          const p = await newPayment(m, { amount: '2' });
          let bound: string | null = null;
          for (const step of steps) {
            const account = who[step.account]!;
            if (bound === null && step.what === 'read' && account !== m.accountId) bound = account;
            const res = await act(step.what, tokens[step.account]!, p);
            const isMissing =
              res.status === missing[step.what].status && JSON.stringify(res.body) === JSON.stringify(missing[step.what].body);
            assert.equal(
              isMissing,
              account !== bound,
              `${step.what} by account ${step.account} (payer: ${bound}): ${res.status} ${res.text}`,
            );
          }
          assert.equal(await payerOf(p.id), bound);
        },
      ),
      { numRuns: 20 },
    );
  });
});

describe('Hosted checkout: the Vault session obeys the payer binding', () => {
  /** POST /checkout/{id}/session as a partner's front end would, without following the 303. */
  async function postSession(paymentId: string, form: Record<string, string>) {
    const h = await getHarness();
    const res = await fetch(`${h.baseUrl}/checkout/${paymentId}/session`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    return {
      status: res.status,
      cookie: res.headers.get('set-cookie')?.split(';')[0] ?? null,
      body: res.status === 303 ? null : ((await res.json()) as unknown),
    };
  }

  test('another account can neither open a session on a bound Payment nor pay it from its vault with a session it holds', async () => {
    const h = await getHarness();
    const v = await activeVault('100000000');
    await payTo(await newPayer(10_000_000n), v.vault.address, 10_000_000n);
    const m = await newMerchant(v.cred);
    const p = await newPayment(m, { amount: '2' });
    const bob = await fundedVaultIn(v.cred);
    const [aliceToken, bobToken] = [await clientTokenFor(m.cred, v.accountId), await clientTokenFor(m.cred, bob)];
    const u = unknownPayment();
    const missing = await postSession(u.id, { clientToken: bobToken, clientSecret: u.secret });
    assert.equal(missing.status, 404);

    // Alice is the payer (her client read); Bob's vault could pay, but the Payment is not his.
    assert.equal((await read(aliceToken, p)).status, 200);
    const bobs = await postSession(p.id, { clientToken: bobToken, clientSecret: p.secret });
    assert.deepEqual({ ...bobs, cookie: null }, { ...missing, cookie: null });
    assert.equal(bobs.cookie, null, 'no session cookie');

    // A session Bob held from before the binding (sealed as the session route seals one) opens nothing.
    const csrf = 'csrf-token-of-an-older-session';
    const sealed = sealText(
      TEST_SERVICE_SECRET,
      'checkout-session:v1',
      p.id,
      JSON.stringify({ token: bobToken, csrf, exp: Math.floor(Date.now() / 1000) + 600 }),
    );
    const cookie = `checkout_session_${p.id}=${sealed}`;
    const vault = await fetch(`${h.baseUrl}/checkout/${p.id}/vault`, { headers: { cookie } });
    assert.equal(vault.status, 404);
    assert.deepEqual(await vault.json(), missing.body);
    const pay = await fetch(`${h.baseUrl}/checkout/${p.id}/vault/authorize`, { method: 'POST', headers: { cookie, 'x-csrf-token': csrf } });
    assert.equal(pay.status, 404);
    assert.deepEqual(await pay.json(), missing.body);
    assert.equal(await h.db.prisma.vaultFundingOperation.count({ where: { paymentId: p.id } }), 0);
    assert.equal(await payerOf(p.id), v.accountId);

    // Alice's own session offers her vault.
    const hers = await postSession(p.id, { clientToken: aliceToken, clientSecret: p.secret });
    assert.equal(hers.status, 303);
    const state = (await (await fetch(`${h.baseUrl}/checkout/${p.id}/vault`, { headers: { cookie: hers.cookie! } })).json()) as {
      state: string;
    };
    assert.equal(state.state, 'available');
  });
});
