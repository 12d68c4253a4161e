import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext } from 'playwright-core';
import { call, clientTokenFor } from '../support/api-client';
import { newContext } from '../support/browser';
import { eventually, newPayer, payTo } from '../support/chain';
import { getHarness } from '../support/harness';
import { endsWithBooksChecked } from '../support/books';
import { newMerchant, waitForPayment, newPayment, newAccount } from '../support/fixtures';
import { activeVault } from '../vaults/support';
import { openCheckout, partnerSite, untilPhase } from './support';

/** POST /checkout/{id}/session as a partner's front end would (form body), without following the 303. */
async function postSession(paymentId: string, form: Record<string, string>) {
  const h = await getHarness();
  return fetch(`${h.baseUrl}/checkout/${paymentId}/session`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
}

const cookieOf = (res: Response) => res.headers.get('set-cookie')?.split(';')[0] ?? '';

describe('Hosted checkout: the payer session and the Vault option', () => {
  endsWithBooksChecked();
  let desktop: BrowserContext;
  before(async () => {
    desktop = await newContext('desktop');
  });
  after(async () => {
    await desktop?.close();
  });

  test("the partner's page posts the client token and payment secret (never a URL); the page offers Pay from Vault, and paying from it succeeds", async (t) => {
    const h = await getHarness();
    const v = await activeVault('100000000');
    await payTo(await newPayer(40_000_000n), v.vault.address, 40_000_000n);
    const m = await newMerchant(v.cred);
    const payment = await newPayment(m, { amount: '12.5' });
    const token = await clientTokenFor(m.cred, v.accountId);

    // The partner's site (another origin) hands the credentials over in a form POST.
    const shop = await partnerSite(t);
    shop.pages.set(
      '/pay',
      `<!doctype html><title>Shop</title><form method="post" action="${h.baseUrl}/checkout/${payment.id}/session">
        <input type="hidden" name="clientToken" value="${token}"><input type="hidden" name="clientSecret" value="${payment.secret}">
        <button type="submit">Pay now</button></form>`,
    );
    const page = await desktop.newPage();
    const requested: string[] = [];
    page.on('request', (req) => requested.push(req.url()));
    await page.goto(`${shop.url}/pay`);
    await Promise.all([page.waitForURL(`${h.baseUrl}/checkout/${payment.id}`), page.click('button')]);
    for (const url of requested) assert.ok(!url.includes(payment.secret) && !url.includes(token), `a secret in ${url}`);

    const [cookie] = (await desktop.cookies(h.baseUrl + `/checkout/${payment.id}`)).filter(
      (c) => c.name === `checkout_session_${payment.id}`,
    );
    assert.ok(cookie, 'the session cookie is set');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');
    assert.equal(cookie.path, `/checkout/${payment.id}`);
    assert.ok(!cookie.value.includes(token) && !cookie.value.includes(payment.secret), 'sealed, not plain');

    // The page's own (same-site) fetch carries the Strict cookie: the Vault option appears.
    await page.waitForSelector('[data-action="vault-pay"]', { state: 'visible' });
    assert.match((await page.textContent('[data-field="vault-text"]'))!, /Your vault can pay this amount/);
    const tab = await openCheckout(desktop, payment.id);
    await tab.page.waitForSelector('[data-action="vault-pay"]', { state: 'visible' });
    await tab.page.click('[data-action="vault-pay"]');
    await tab.page.waitForSelector('[data-field="vault-text"]:text-matches("on its way|Paid from your vault")');
    const op = await h.db.prisma.vaultFundingOperation.findFirst({ where: { paymentId: payment.id, accountId: v.accountId } });
    assert.ok(op, 'a funding operation was authorized for the payer');
    const action = await h.db.prisma.paymentAction.findFirst({
      where: { paymentId: payment.id, accountId: v.accountId, usedAt: { not: null } },
    });
    assert.deepEqual(action?.metadata, { channel: 'hosted_checkout' });
    await untilPhase(tab, 'succeeded');
    await waitForPayment(m, payment.id, 'succeeded', (p) => p.status === 'succeeded');
    // The funding's own workflow ends once its transfer is at depth: nothing runs on after the test.
    await eventually(
      async () => (await h.db.prisma.vaultFundingOperation.findUniqueOrThrow({ where: { id: op.id } })).status === 'confirmed',
      'funding confirmed',
    );
    assert.deepEqual(tab.cspViolations, []);
    await page.close();
    await tab.page.close();
  });

  test('a session needs the payment secret and a live client token; its cookie is sealed to one Payment; authorize needs the CSRF token', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const payer = await newAccount(m.cred);
    const a = await newPayment(m, { amount: '12.5' });
    const b = await newPayment(m, { amount: '12.5' });
    const token = await clientTokenFor(m.cred, payer);

    const wrongSecret = await postSession(a.id, { clientToken: token, clientSecret: b.secret });
    assert.equal(wrongSecret.status, 401);
    assert.equal(wrongSecret.headers.get('set-cookie'), null);
    const badToken = await postSession(a.id, { clientToken: `${token.slice(0, -2)}xx`, clientSecret: a.secret });
    assert.equal(badToken.status, 401);
    const inUrl = await fetch(`${h.baseUrl}/checkout/${a.id}/session?clientSecret=${a.secret}`, { method: 'POST', redirect: 'manual' });
    assert.equal(inUrl.status, 415, 'nothing is read from the URL');

    const ok = await postSession(a.id, { clientToken: token, clientSecret: a.secret });
    assert.equal(ok.status, 303);
    assert.equal(ok.headers.get('location'), `/checkout/${a.id}`);
    assert.match(
      ok.headers.get('set-cookie')!,
      new RegExp(`^checkout_session_${a.id}=[^;]+; Path=/checkout/${a.id}; Max-Age=900; HttpOnly; SameSite=Strict$`),
    );
    const cookie = cookieOf(ok);

    // A payer without a vault sees no Vault option; the session's CSRF token comes with it.
    const vault = await fetch(`${h.baseUrl}/checkout/${a.id}/vault`, { headers: { cookie } });
    assert.equal(vault.status, 200);
    const body = (await vault.json()) as { state: string; csrfToken: string };
    assert.equal(body.state, 'none');
    assert.match(body.csrfToken, /^[A-Za-z0-9_-]{24}$/);

    assert.equal((await fetch(`${h.baseUrl}/checkout/${a.id}/vault`)).status, 401, 'no cookie, no session');
    assert.equal(
      (await fetch(`${h.baseUrl}/checkout/${b.id}/vault`, { headers: { cookie } })).status,
      401,
      "another Payment's cookie opens nothing",
    );
    assert.equal(
      (await fetch(`${h.baseUrl}/checkout/${b.id}/vault`, { headers: { cookie: cookie.replace(a.id, b.id) } })).status,
      401,
      "nor under that Payment's name: the value is sealed to its own",
    );
    const noCsrf = await fetch(`${h.baseUrl}/checkout/${a.id}/vault/authorize`, { method: 'POST', headers: { cookie } });
    assert.equal(noCsrf.status, 403);
    assert.equal(((await noCsrf.json()) as any).error.details.reasonCode, 'csrf_token_mismatch');
    const withCsrf = await fetch(`${h.baseUrl}/checkout/${a.id}/vault/authorize`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': body.csrfToken },
    });
    assert.equal(withCsrf.status, 200);
    assert.equal(((await withCsrf.json()) as any).state, 'none', 'nothing to authorize without a vault');
    assert.equal(await h.db.prisma.vaultFundingOperation.count({ where: { paymentId: a.id } }), 0);

    // A revoked token ends the session at once.
    assert.equal((await call('/v2/client/auth/revoke', { credential: m.cred, body: { accountId: payer } })).status, 200);
    assert.equal((await fetch(`${h.baseUrl}/checkout/${a.id}/vault`, { headers: { cookie } })).status, 401);
  });
});
