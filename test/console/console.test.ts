import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Address } from 'viem';
import type { Page } from 'playwright-core';
import { SANDBOX_TOKEN_ADDRESS } from '../../src/chain/sandbox';
import { getBrowser } from '../support/browser';
import { getHarness, TEST_SERVICE_SECRET } from '../support/harness';
import { sealText } from '../../src/domain/keys/sealed-text';
import { call, newApp } from '../support/api-client';
import { eventually, mine, newPayer, payTo, setNativeBalance, tokenBalance } from '../support/chain';
import { createPayment, getPayment, newMerchant, waitForPayment, type Merchant } from '../support/fixtures';
import { endsWithBooksChecked } from '../support/books';
import { cli } from '../support/cli';
import { createTestOperator } from '../support/operators';
import { newConsole, pageProblems, requestSignInCode, signIn, UI, wrongTotp, type ConsoleInBrowser } from './support';
import { axeViolations } from '../support/axe';

const USDC = (n: number) => BigInt(n) * 1_000_000n;

/** With an empty treasury no escrow gets gas: every settlement attempt fails before broadcasting. */
async function treasury(wei: bigint) {
  const h = await getHarness();
  await setNativeBalance(h.chain.custody.deriveAddress({ purpose: 'treasury', index: 0 }), wei);
}

/** Payments paid in full whose settlement budget is spent: held in requires_intervention. */
async function heldPayments(m: Merchant, count: number) {
  const h = await getHarness();
  const payments = [];
  h.policies.payment = { retryBackoffSeconds: 0.2 };
  try {
    for (let i = 0; i < count; i += 1) payments.push((await createPayment(m, { amount: '2' })).body.payment);
  } finally {
    delete h.policies.payment;
  }
  const payer = await newPayer(USDC(2 * count));
  await treasury(0n);
  try {
    for (const p of payments) await payTo(payer, p.funding.depositAddress.address, USDC(2));
    for (const p of payments) await waitForPayment(m, p.id, 'requires_intervention', (x) => x.operationalState === 'requires_intervention');
  } finally {
    await treasury(100n * 10n ** 18n);
  }
  return payments as Array<{ id: string; fees: { merchantNetAmountAtomic: string } }>;
}

/** Reloads the list until the item is gone from it (its workflow applied the action). */
async function waitUntilUnlisted(page: Page, baseUrl: string, id: string) {
  await eventually(async () => {
    await page.goto(`${baseUrl}/console`);
    return (await page.locator(`tr[data-id="${id}"]`).count()) === 0;
  }, `${id} off the console's list`);
}

// Launched as the file loads: getBrowser registers its closing `after` where it is first called, and
// called from a before() hook that would close Chromium as soon as the hook ends.
void getBrowser();

describe('Operator console', () => {
  endsWithBooksChecked();
  let web: ConsoleInBrowser;
  before(async () => {
    web = await newConsole();
  });
  after(() => web?.close());

  test('is on the admin listener only: the partner API answers 404 for the console, the admin API and /metrics', async () => {
    const h = await getHarness();
    for (const target of ['/console', '/console/login', '/admin/v1/apps/app_x/dashboard-users', '/metrics'])
      assert.equal((await fetch(`${h.baseUrl}${target}`, { redirect: 'manual' })).status, 404, target);
    assert.equal((await fetch(`${web.baseUrl}/console/login`, { redirect: 'manual' })).status, 200, 'the admin listener has it');
  });

  test('sends a visitor without a session to sign in, refuses a wrong authenticator code, signs in with the emailed and authenticator codes, and logs out', async () => {
    const op = await createTestOperator('operator');
    await web.page.goto(`${web.baseUrl}/console/payments/payment_x`);
    assert.equal(new URL(web.page.url()).pathname, '/console/login');
    const login = await web.page.goto(`${web.baseUrl}/console/login`);
    const csp = login!.headers()['content-security-policy'] ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /script-src|unsafe-inline/);
    assert.equal(login!.headers()['cache-control'], 'no-store');
    assert.equal(login!.headers()['referrer-policy'], 'no-referrer');

    // The right emailed code with a wrong authenticator code: refused, on the code form, no session.
    await signIn(web.page, web.baseUrl, op, { totp: await wrongTotp(op) });
    assert.equal(new URL(web.page.url()).pathname, '/console/login/code');
    assert.match((await web.page.getByRole('alert').textContent()) ?? '', /Those codes are not right/);
    assert.equal(
      (await web.context.cookies()).some((c) => c.name === 'pp_console'),
      false,
    );

    await signIn(web.page, web.baseUrl, op);
    assert.equal(new URL(web.page.url()).pathname, '/console');
    assert.equal(await web.page.getByRole('heading', { level: 1 }).textContent(), 'Holds');
    const header = (await web.page.locator('header').textContent()) ?? '';
    assert.ok(header.includes(`Signed in as ${op.email}`), header);
    const cookie = (await web.context.cookies()).find((c) => c.name === 'pp_console');
    assert.ok(cookie, 'a session cookie');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');
    assert.equal(cookie.path, '/', "the admin listener is the console's own: its cookie goes to every path");
    assert.ok(!cookie.value.includes(op.email.split('@')[0]!), 'the session is sealed, not readable');

    await web.page.getByRole('button', { name: 'Log out' }).click();
    await web.page.waitForLoadState('domcontentloaded');
    assert.equal(new URL(web.page.url()).pathname, '/console/login');
    await web.page.goto(`${web.baseUrl}/console`);
    assert.equal(new URL(web.page.url()).pathname, '/console/login', 'the session ended');
  });

  test('ends a session at its expiry: a session past its time is sent to sign in, and a forged or tampered cookie never signs in', async () => {
    const h = await getHarness();
    const eve = await createTestOperator('viewer');
    await signIn(web.page, web.baseUrl, eve);
    const cookie = (await web.context.cookies()).find((c) => c.name === 'pp_console')!;
    const url = new URL(web.baseUrl);
    const visit = async (value: string) => {
      await web.context.clearCookies();
      await web.context.addCookies([{ name: 'pp_console', value, domain: url.hostname, path: '/', httpOnly: true, sameSite: 'Strict' }]);
      await web.page.goto(`${web.baseUrl}/console`);
      return new URL(web.page.url()).pathname;
    };
    assert.equal(await visit(cookie.value), '/console', 'a live session is let in');
    assert.equal(await visit(`${cookie.value}x`), '/console/login', 'a tampered cookie is not');
    // A cookie sealed with the right key but naming no session the server opened is not either.
    const forged = sealText(
      TEST_SERVICE_SECRET,
      'console-session',
      'pp_console',
      JSON.stringify({ id: 'csess_forged', who: eve.email, csrf: 'c'.repeat(43), expiresAt: Date.now() + 60_000 }),
    );
    assert.equal(await visit(forged), '/console/login', 'nor a session the server never opened');
    await h.db.prisma.consoleSession.updateMany({
      where: { operatorId: eve.id, endedAt: null },
      data: { expiresAt: new Date(Date.now() - 1) },
    });
    assert.equal(await visit(cookie.value), '/console/login', 'an expired one is not');
  });

  test('refuses a forged POST that carries the session cookie but not its CSRF token, and acts on nothing', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = (await createPayment(m)).body.payment;
    await signIn(web.page, web.baseUrl, await createTestOperator('operator'));
    // The browser's own request context sends the session cookie, as a forged cross-site form would.
    const forged = await web.context.request.post(`${web.baseUrl}/console/payments/${p.id}/resolve`, {
      form: { action: 'fail', reason: 'forged' },
      maxRedirects: 0,
    });
    assert.equal(forged.status(), 403);
    const wrong = await web.context.request.post(`${web.baseUrl}/console/payments/${p.id}/resolve`, {
      form: { action: 'fail', reason: 'forged', _csrf: 'x'.repeat(43) },
      maxRedirects: 0,
    });
    assert.equal(wrong.status(), 403);
    const loggedOut = await web.context.request.post(`${web.baseUrl}/console/logout`, { form: {}, maxRedirects: 0 });
    assert.equal(loggedOut.status(), 403, 'logout is a form too');
    assert.equal(await h.db.prisma.operatorAction.count({ where: { targetId: p.id } }), 0);
    assert.equal((await getPayment(m, p.id)).payment.status, 'requires_payment_method');
  });

  test('lists held Payments with reason, amount, timeline, Temporal and chain links; fail and mark-settled from the browser wait for a second operator, who approves them in the browser', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const [toFail, toMark] = (await heldPayments(m, 2)) as [
      { id: string; fees: { merchantNetAmountAtomic: string } },
      { id: string; fees: { merchantNetAmountAtomic: string } },
    ];
    const alice = await createTestOperator('operator', `alice-${Date.now()}@ops.example`);
    await signIn(web.page, web.baseUrl, alice);
    if (process.env.SCREENSHOT_DIR) {
      // npm run screenshots:console: the list with two holds, as an operator sees it.
      mkdirSync(process.env.SCREENSHOT_DIR, { recursive: true });
      await web.page.screenshot({ path: path.join(process.env.SCREENSHOT_DIR, 'console-desktop.png'), fullPage: true });
    }

    const row = web.page.locator(`tr[data-id="${toFail.id}"]`);
    assert.equal(await row.count(), 1, 'the held Payment is listed');
    const cells = await row.locator('td').allTextContents();
    assert.deepEqual(cells.slice(0, 5), [
      `payment ${toFail.id}`,
      'requires_intervention',
      'settlement_requires_intervention',
      '2 USDC',
      'accepted',
    ]);
    assert.equal(
      await row.getByRole('link', { name: 'Temporal UI' }).getAttribute('href'),
      `${UI}/namespaces/default/workflows/${toFail.id}`,
    );

    await row.getByRole('link', { name: `payment ${toFail.id}` }).click();
    await web.page.waitForLoadState('domcontentloaded');
    const timeline = (await web.page.locator('.timeline').textContent()) ?? '';
    assert.match(timeline, /payment\.requires_intervention/);
    assert.match(timeline, /transfer confirmed \(funding\)/);
    const funding = await h.db.prisma.paymentTransfer.findFirstOrThrow({ where: { paymentId: toFail.id } });
    const chainLink = web.page.locator('.timeline a').first();
    assert.equal(await chainLink.getAttribute('href'), `/console/chains/${h.chainId}/transactions/${funding.txHash}`);
    await chainLink.click();
    await web.page.waitForLoadState('domcontentloaded');
    const receipt = (await web.page.locator('main').textContent()) ?? '';
    assert.match(receipt, /Statusconfirmed/);
    assert.match(receipt, new RegExp(`2000000`));
    await web.page.goBack();

    // Fail, with the reason the partner will see.
    const failForm = web.page.locator('form', { has: web.page.getByRole('heading', { name: 'Fail' }) });
    await failForm.getByLabel('Why').fill('customer refunded off-platform');
    await failForm.getByRole('button', { name: 'Fail' }).click();
    await web.page.waitForLoadState('domcontentloaded');
    // Its escrow holds the payer's funds: failing it is a request for a second operator.
    assert.match((await web.page.getByRole('status').textContent()) ?? '', /Sent for approval/);
    const audit = await web.page.locator('table.audit tbody tr').first().locator('td').allTextContents();
    assert.deepEqual(audit.slice(1, 3), [alice.email, 'console']);
    assert.match(audit[3]!, /^fail approvalId=approval_/);
    assert.deepEqual(audit.slice(4, 5), ['customer refunded off-platform']);
    assert.match(audit[5]!, /^requested /);
    assert.ok(!Number.isNaN(Date.parse(audit[0]!)), `a time: ${audit[0]}`);
    const partnerView = await call(`/v2/payments/${toFail.id}`, { credential: m.cred });
    assert.deepEqual([partnerView.body.payment.status, partnerView.body.payment.operationalState], ['accepted', 'requires_intervention']);

    // Mark settled: a hash that pays nobody is refused (shown, audited), then the real manual payout.
    await web.page.goto(`${web.baseUrl}/console/payments/${toMark.id}`);
    const markForm = () => web.page.locator('form', { has: web.page.getByRole('heading', { name: 'Mark settled' }) });
    await markForm()
      .getByLabel('Payout transaction hash')
      .fill(`0x${'ab'.repeat(32)}`);
    await markForm().getByLabel('Why').fill('paid out by hand');
    await markForm().getByRole('button', { name: 'Mark settled' }).click();
    await web.page.waitForLoadState('domcontentloaded');
    assert.match((await web.page.getByRole('alert').textContent()) ?? '', /not on the chain/);
    const refused = await web.page.locator('table.audit tbody tr').first().locator('td').allTextContents();
    assert.deepEqual(refused.slice(1, 5), [alice.email, 'console', `mark-settled txHash=0x${'ab'.repeat(32)}`, 'paid out by hand']);
    assert.match(refused[5]!, /^refused .*not on the chain/);

    const chain = h.chain.chains.get(h.chainId);
    const net = BigInt(toMark.fees.merchantNetAmountAtomic);
    const row2 = await h.db.prisma.payment.findUniqueOrThrow({ where: { id: toMark.id } });
    const escrow = h.chain.custody.signer({ purpose: 'escrow', index: row2.escrowIndex });
    await setNativeBalance(escrow.address, 10n ** 16n);
    const tx = await chain.sendTokenTransfer({ from: escrow, token: SANDBOX_TOKEN_ADDRESS, to: m.wallet as Address, amountAtomic: net });
    await mine(2);
    await markForm().getByLabel('Payout transaction hash').fill(tx);
    await markForm().getByLabel('Why').fill('paid out by hand from the escrow');
    await markForm().getByRole('button', { name: 'Mark settled' }).click();
    await web.page.waitForLoadState('domcontentloaded');
    assert.match((await web.page.getByRole('status').textContent()) ?? '', /Sent for approval/);

    // Alice sees both requests but can't decide her own; Bob, an approver, approves them.
    await web.page.goto(`${web.baseUrl}/console/approvals`);
    for (const id of [toFail.id, toMark.id]) assert.ok(((await web.page.locator('main').textContent()) ?? '').includes(id), `${id} waits`);
    assert.equal(await web.page.getByRole('button', { name: /^Approve / }).count(), 0, 'no approve button for the requester');
    const bob = await createTestOperator('approver', `bob-${Date.now()}@ops.example`);
    await signIn(web.page, web.baseUrl, bob);
    await web.page.goto(`${web.baseUrl}/console/approvals`);
    assert.deepEqual(await pageProblems(web.page), []);
    for (const id of [toFail.id, toMark.id]) {
      await web.page
        .locator('tr', { hasText: id })
        .getByRole('button', { name: /^Approve / })
        .click();
      await web.page.waitForLoadState('domcontentloaded');
      assert.match((await web.page.getByRole('status').textContent()) ?? '', /Approved and carried out/);
    }
    const failed = await waitForPayment(m, toFail.id, 'failed', (x) => x.status === 'failed');
    assert.deepEqual(failed.failure, { code: 'operator_failed', message: 'customer refunded off-platform' });
    const marked = await waitForPayment(m, toMark.id, 'succeeded', (x) => x.status === 'succeeded');
    assert.equal(marked.operationalState, 'normal');
    await waitUntilUnlisted(web.page, web.baseUrl, toFail.id);
    await waitUntilUnlisted(web.page, web.baseUrl, toMark.id);

    const rows = await h.db.prisma.operatorAction.findMany({
      where: { targetId: { in: [toFail.id, toMark.id] } },
      orderBy: { createdAt: 'asc' },
    });
    assert.deepEqual(
      rows.map((r) => [r.targetId, r.action, r.actor, r.channel, r.outcome, r.reason]),
      [
        [toFail.id, 'fail', alice.email, 'console', 'requested', 'customer refunded off-platform'],
        [toMark.id, 'mark-settled', alice.email, 'console', 'refused', 'paid out by hand'],
        [toMark.id, 'mark-settled', alice.email, 'console', 'requested', 'paid out by hand from the escrow'],
        [toFail.id, 'fail', bob.email, 'console', 'signalled', 'customer refunded off-platform'],
        [toMark.id, 'mark-settled', bob.email, 'console', 'signalled', 'paid out by hand from the escrow'],
      ],
    );
    assert.equal((rows[4]!.details as Record<string, string>).txHash, tx);
    assert.equal((rows[4]!.details as Record<string, string>).approvalId, (rows[2]!.details as Record<string, string>).approvalId);
    // The workflow recorded who released each hold, as it does for the CLI.
    const resolutions = await h.db.prisma.paymentResolution.findMany({ where: { paymentId: { in: [toFail.id, toMark.id] } } });
    assert.deepEqual(
      resolutions.map((r) => [r.paymentId, r.action, r.actor]).sort(),
      [
        [toFail.id, 'fail', bob.email],
        [toMark.id, 'mark-settled', bob.email],
      ].sort(),
    );

    await web.page.goto(`${web.baseUrl}/console/actions`);
    const recent = (await web.page.locator('table.audit tbody').textContent()) ?? '';
    for (const id of [toFail.id, toMark.id]) assert.ok(recent.includes(id), `${id} in the recent actions`);
  });

  test('recovers an incident from the browser: the funds go back to the payer, and the audit names the recovery', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = (await createPayment(m, { amount: '3' })).body.payment;
    const payer = await newPayer(USDC(4));
    await payTo(payer, p.funding.depositAddress.address, USDC(3));
    await payTo(payer, p.funding.depositAddress.address, USDC(1));
    await waitForPayment(
      m,
      p.id,
      'succeeded with an excess incident',
      (x) => x.status === 'succeeded' && x.incidentRecoverySummary.count === 1,
    );
    const incident = await h.db.prisma.paymentIncident.findFirstOrThrow({ where: { paymentId: p.id } });

    const bob = await createTestOperator('operator');
    await signIn(web.page, web.baseUrl, bob);
    const listed = web.page.locator('#incidents ~ table tr', { hasText: incident.id });
    assert.equal(await listed.count(), 1, 'the incident is listed');
    await listed.getByRole('link', { name: p.id }).click();
    await web.page.waitForLoadState('domcontentloaded');
    const form = web.page.locator('form', { has: web.page.getByRole('heading', { name: 'Recover an incident' }) });
    await form.getByLabel('Incident').selectOption(incident.id);
    await form.getByLabel('Why').fill('payer overpaid by 1 USDC');
    await form.getByRole('button', { name: 'Recover incident' }).click();
    await web.page.waitForLoadState('domcontentloaded');
    assert.match((await web.page.getByRole('status').textContent()) ?? '', /Incident recovery created/);

    const recoveries = await call(`/v2/payments/${p.id}/incident-recoveries`, { credential: m.cred });
    assert.equal(recoveries.body.items.length, 1);
    const recovery = recoveries.body.items[0];
    assert.equal(recovery.reason, 'payer overpaid by 1 USDC');
    const [audit] = await h.db.prisma.operatorAction.findMany({ where: { targetId: p.id } });
    assert.deepEqual(
      [audit?.action, audit?.actor, audit?.channel, audit?.outcome, audit?.outcomeDetail, audit?.details],
      ['recover-incident', bob.email, 'console', 'created', recovery.id, { incidentId: incident.id }],
    );
    await eventually(async () => {
      const res = await call(`/v2/payments/${p.id}/incident-recoveries`, { credential: m.cred });
      return res.body.items[0]?.status === 'confirmed';
    }, 'the recovery confirmed');
    assert.equal(await tokenBalance(payer.address), USDC(1), 'the payer paid all 4 USDC and has the excess 1 back');
  });

  test('the CLI and the admin API write the same audit rows as the console', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const p = (await createPayment(m)).body.payment;
    const dave = await createTestOperator('operator');
    await assert.rejects(cli(['payments', 'resolve', p.id, '--action', 'retry', '--actor', 'carol', '--reason', 'try again']));
    const recover = (body: object) =>
      fetch(`${web.baseUrl}/admin/v1/payments/${p.id}/incident-recoveries`, {
        method: 'POST',
        headers: { authorization: `Bearer ${dave.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    // The actor is the operator the token belongs to: a body naming another is refused, and acts on nothing.
    assert.equal((await recover({ incidentId: 'incident_none', reason: 'no such incident', actor: 'mallory' })).status, 400);
    assert.equal((await recover({ incidentId: 'incident_none', reason: 'no such incident' })).status, 404);
    const rows = await h.db.prisma.operatorAction.findMany({ where: { targetId: p.id }, orderBy: { createdAt: 'asc' } });
    assert.deepEqual(
      rows.map((r) => [r.channel, r.actor, r.action, r.reason, r.outcome]),
      [
        ['cli', 'carol', 'retry', 'try again', 'refused'],
        ['admin_api', dave.email, 'recover-incident', 'no such incident', 'refused'],
      ],
    );
    assert.match(rows[0]!.outcomeDetail ?? '', /not held/);
  });

  test('finds a Payment by id, externalReference or transaction hash from the search box: one match opens it, several are listed', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const reference = `order-${Date.now()}`;
    const paid = (await createPayment(m, { amount: '3', externalReference: reference })).body.payment;
    const other = (await createPayment(m, { amount: '4', externalReference: reference })).body.payment;
    const payIn = await payTo(await newPayer(USDC(3)), paid.funding.depositAddress.address, USDC(3));
    await waitForPayment(m, paid.id, 'succeeded', (x) => x.status === 'succeeded');
    const leg = await h.db.prisma.settlementLeg.findFirstOrThrow({ where: { sourceType: 'payment', sourceId: paid.id } });
    await signIn(web.page, web.baseUrl, await createTestOperator('viewer'));

    const find = async (q: string) => {
      await web.page.getByLabel('Find').fill(q);
      await web.page.getByLabel('Find').press('Enter');
      await web.page.waitForLoadState('domcontentloaded');
      return new URL(web.page.url()).pathname;
    };
    for (const q of [paid.id, payIn, payIn.toUpperCase().replace('0X', '0x'), leg.txHash, ` ${paid.id} `]) {
      assert.equal(await find(q), `/console/payments/${paid.id}`, q);
      assert.equal(await web.page.locator('h1').count(), 1);
    }
    // Its timeline names each event and where its webhooks stand (this app has no endpoint).
    const timeline = (await web.page.locator('.timeline').textContent()) ?? '';
    assert.match(timeline, /payment\.succeeded\s+event evt_\w+; no webhook delivery/);
    assert.equal(await find(reference), '/console/search');
    assert.deepEqual(
      (await web.page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')))).sort(),
      [paid.id, other.id].sort(),
    );
    assert.deepEqual(await web.page.locator('tbody tr td:nth-child(4)').allTextContents(), ['externalReference', 'externalReference']);
    assert.equal(await find('payment_doesNotExist'), '/console/search');
    assert.match((await web.page.locator('main p').first().textContent()) ?? '', /Nothing matches/);
    const anonymous = await fetch(`${web.baseUrl}/console/search?q=${paid.id}`, { redirect: 'manual' });
    assert.equal(anonymous.status, 302, 'a visitor without a session is sent to sign in');
    assert.match(anonymous.headers.get('location') ?? '', /\/console\/login/);
  });

  test("invites a partner user to an app's dashboard as an admin operator, and changes their role; a bad email is refused on the page, and an operator below admin may not invite", async () => {
    const h = await getHarness();
    const app = await newApp();
    const showUsers = async () => {
      await web.page.getByRole('link', { name: 'Dashboard users' }).click();
      await web.page.getByLabel('App id').fill(app.appId);
      await web.page.getByRole('button', { name: 'Show' }).click();
    };
    const invite = async (email: string, role: string) => {
      await web.page.getByLabel('Email').fill(email);
      await web.page.getByLabel('Role').selectOption(role);
      const [answer] = await Promise.all([
        web.page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/console/dashboard-users'),
        web.page.getByRole('button', { name: 'Invite' }).click(),
      ]);
      await web.page.waitForLoadState('domcontentloaded');
      return answer.status();
    };

    // The operator role reads the page, but inviting needs admin: 403, and nobody is invited.
    await signIn(web.page, web.baseUrl, await createTestOperator('operator'));
    await showUsers();
    assert.equal(await invite('early@partner.example', 'developer'), 403);
    assert.equal(await h.db.prisma.partnerUser.count({ where: { appId: app.appId } }), 0);

    const admin = await createTestOperator('admin');
    await signIn(web.page, web.baseUrl, admin);
    await showUsers();
    assert.match(await web.page.locator('#users + table').innerText(), /Nobody yet/);
    assert.equal(await invite('Dev@Partner.example', 'developer'), 303);
    assert.match(await web.page.getByRole('status').innerText(), /Invited/);
    const invitedBy = admin.email.replace(/[.+]/g, '\\$&');
    assert.match(await web.page.locator('#users + table').innerText(), new RegExp(`dev@partner\\.example\\s+developer\\s+${invitedBy}`));
    assert.equal(await invite('dev@partner.example', 'admin'), 303);
    assert.match(await web.page.locator('#users + table').innerText(), /dev@partner\.example\s+admin/);
    assert.equal(await web.page.locator('#users + table tbody tr').count(), 1, 'one membership per email and app');
    // Past the browser's own check, as a script or an old browser would send it.
    await web.page.locator('#email').evaluate((el: { setAttribute(name: string, value: string): void }) => el.setAttribute('type', 'text'));
    assert.equal(await invite('not-an-email', 'viewer'), 400);
    assert.match(await web.page.getByRole('alert').innerText(), /email/);
    assert.deepEqual(await axeViolations(web.page), [], 'axe on the refusal');
  });

  test("every page passes a basic accessibility check and axe-core's WCAG 2.1 AA rules", async () => {
    const m = await newMerchant();
    const p = (await createPayment(m)).body.payment;
    const check = async () => [...(await pageProblems(web.page)), ...(await axeViolations(web.page))];
    await web.context.clearCookies();
    await web.page.goto(`${web.baseUrl}/console/login`);
    assert.deepEqual(await check(), [], 'login');
    const op = await createTestOperator('admin');
    const code = await requestSignInCode(web.page, web.baseUrl, op.email);
    assert.deepEqual(await check(), [], 'the code form');
    await web.page.getByLabel('Emailed code').fill(code);
    await web.page.getByLabel('Authenticator code').fill(await op.totp());
    await web.page.getByRole('button', { name: 'Sign in' }).click();
    await web.page.waitForURL(`${web.baseUrl}/console`);
    for (const target of [
      '/console',
      `/console/payments/${p.id}`,
      '/console/alerts',
      '/console/alerts?kind=ledger_difference',
      '/console/actions',
      '/console/search?q=nothing-here',
      `/console/dashboard-users?appId=${m.cred.appId}`,
    ]) {
      await web.page.goto(`${web.baseUrl}${target}`);
      assert.deepEqual(await check(), [], target);
    }
  });
});
