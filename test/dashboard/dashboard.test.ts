import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { verifyWebhook } from '../../src/webhooks/verify';
import { newContext } from '../support/browser';
import { sandboxWithout } from '../support/environments';
import { getHarness } from '../support/harness';
import { until } from '../support/until';
import { call, newApp } from '../support/api-client';
import { eventually, newPayer, payTo } from '../support/chain';
import { createPayment, newMerchant, waitForPayment } from '../support/fixtures';
import { delivered, dispatch, ensureTestDispatcher, stopTestDispatcher } from '../webhooks/support/flow';
import { assertAccessible, emailedCode, signInByEmail, startDashboardApi, startPartnerReceiver, type PartnerReceiver } from './support';

const shot = async (page: Page, name: string) => {
  if (!process.env.SCREENSHOT_DIR) return;
  mkdirSync(process.env.SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(process.env.SCREENSHOT_DIR, `dashboard-${name}.png`), fullPage: true });
};

/** The UTC wall time as a datetime-local field takes it (seconds, no zone). */
const utcField = (d: Date) => d.toISOString().slice(0, 19);

describe('Partner dashboard: a new partner, as a new user would', () => {
  let api: Awaited<ReturnType<typeof startDashboardApi>>;
  let receiver: PartnerReceiver;
  let context: BrowserContext;
  let page: Page;
  before(async () => {
    api = await startDashboardApi();
    receiver = await startPartnerReceiver();
    await ensureTestDispatcher();
    context = await newContext('desktop');
    page = await context.newPage();
  });
  after(async () => {
    const h = await getHarness();
    h.webhookRetry.backoffMs = null;
    await stopTestDispatcher('suite done');
    await context?.close();
    await receiver?.close();
    await api?.close();
  });

  test('signs in by emailed code, adds an endpoint, sends a test event, takes a Payment, and recovers every event its down receiver missed', async () => {
    const h = await getHarness();
    const m = await newMerchant();
    const email = `dev-${Date.now()}@partner.example`;
    await api.invite(m.cred.appId, email, 'developer');

    // Sign in: the login and code pages, then the overview.
    await page.goto(`${api.baseUrl}/dashboard/login`);
    await assertAccessible(page, 'sign-in');
    await signInByEmail(page, api.baseUrl, email);
    await assertAccessible(page, 'overview');
    assert.match(await page.locator('main').innerText(), new RegExp(m.cred.appId));
    await shot(page, 'overview');

    // Add an endpoint (every event); the signing secret is shown once.
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await assertAccessible(page, 'webhook endpoints');
    await page.getByLabel(/^URL/).fill(receiver.url);
    await page.getByLabel(/^Description/).fill('Orders service');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await assertAccessible(page, 'secret shown once');
    const secret = await page.getByLabel('Secret').inputValue();
    assert.match(secret, /^whsec_/);
    await page.getByRole('link', { name: 'Done' }).click();
    const endpointId = new URL(page.url()).pathname.split('/').pop()!;
    assert.match(endpointId, /^whe_/);
    await assertAccessible(page, 'endpoint');

    // A test event: a real signed delivery to this endpoint only.
    await page.getByRole('button', { name: 'Send a test event' }).click();
    assert.match(await page.getByRole('status').innerText(), /Test event sent/);
    const testEvent = await h.db.prisma.event.findFirstOrThrow({ where: { resourceId: endpointId, name: 'webhook_endpoint.test' } });
    await dispatch();
    assert.equal((await delivered(testEvent.id, endpointId)).status, 'succeeded');
    const ping = verifyWebhook(receiver.received[0]!.rawBody, receiver.received[0]!.headers, secret);
    assert.equal(ping.name, 'webhook_endpoint.test');

    // Take a Payment while the receiver is down: each of its events is abandoned after 3 attempts.
    // The waits between them are short here: skipping 5 minutes would walk every earlier test's
    // workflows through their timers (the 30 s / 5 min schedule is test/webhooks/delivery.test.ts's).
    h.webhookRetry.backoffMs = [300, 600];
    receiver.down = true;
    const since = new Date(Date.now() - 1000);
    const p = (await createPayment(m, { amount: '3' })).body.payment;
    await payTo(await newPayer(3_000_000n), p.funding.depositAddress.address, 3_000_000n);
    await waitForPayment(m, p.id, 'succeeded', (x) => x.status === 'succeeded');
    // Its workflow follows its transfers to their confirmation depth: let it finish (blocks mined), so
    // the time skips through the deliveries' backoffs don't walk through its confirmation polls.
    await eventually(async (saw) => {
      const d = await h.env.client.workflow.getHandle(h.engine.paymentWorkflowId(p.id)).describe();
      saw(d.status.name);
      return d.status.name === 'COMPLETED';
    }, `${p.id}'s workflow done following its transfers`);
    await dispatch();
    const events = await h.db.prisma.event.findMany({ where: { resourceId: p.id }, orderBy: { resourceSequence: 'asc' } });
    assert.ok(events.length >= 3, `the Payment's events: ${events.map((e) => e.name).join(', ')}`);
    for (const e of events) {
      const result = await delivered(e.id, endpointId);
      assert.equal(result.status, 'abandoned', `${e.name} while the receiver is down`);
    }
    const refused = receiver.received.filter((r) => r.answered === 503);
    assert.equal(refused.length, events.length * 3, 'three attempts per event');

    // The delivery page shows each attempt: status, latency, the truncated answer.
    await page.reload();
    await page.locator(`tr[data-id] a`).first().click();
    await assertAccessible(page, 'delivery');
    const attempts = await page.locator('#attempts + table tbody tr').allInnerTexts();
    assert.equal(attempts.length, 3, attempts.join('\n'));
    for (const row of attempts) assert.match(row, /503.*\d+ ms.*down for maintenance/s);
    await shot(page, 'delivery');

    // Back up: recover every event since before the Payment, from the dashboard.
    receiver.down = false;
    h.webhookRetry.backoffMs = null;
    await page.goto(`${api.baseUrl}/dashboard/webhooks/${endpointId}`);
    await page.getByLabel('Since (UTC)').fill(utcField(since));
    await page.getByRole('button', { name: 'Recover missed events' }).click();
    assert.match(await page.getByRole('status').innerText(), /Recovery started/);
    await dispatch();
    for (const e of events) assert.equal((await delivered(e.id, endpointId, 2)).status, 'succeeded', `${e.name} recovered`);
    const got = receiver.received.filter((r) => r.answered === 200).map((r) => verifyWebhook(r.rawBody, r.headers, secret));
    assert.deepEqual(
      got
        .filter((g) => g.name !== 'webhook_endpoint.test')
        .map((g) => g.id)
        .sort(),
      events.map((e) => e.id).sort(),
      'every missed event arrived, signed, once',
    );
    await shot(page, 'endpoint');

    // What else a partner reads: events, the Payment's timeline, deposits, the request log, credentials, the audit.
    await page.getByRole('link', { name: 'Events', exact: true }).click();
    await assertAccessible(page, 'events');
    await page.getByLabel('Resource id').fill(p.id);
    await page.getByRole('button', { name: 'Filter' }).click();
    assert.equal(await page.locator('tbody tr[data-id]').count(), events.length);
    await page.locator('tbody tr[data-id] a').first().click();
    await assertAccessible(page, 'event');
    assert.match(await page.locator('pre').innerText(), new RegExp(p.id));

    await page.goto(`${api.baseUrl}/dashboard/payments`);
    await assertAccessible(page, 'payments');
    await page.getByRole('link', { name: p.id }).click();
    await assertAccessible(page, 'payment');
    const timeline = await page.locator('.timeline li').allInnerTexts();
    assert.deepEqual(
      timeline.map((t) => /(payment\.[a-z_]+)/.exec(t)?.[1]),
      events.map((e) => e.name),
    );

    await page.goto(`${api.baseUrl}/dashboard/deposits`);
    await assertAccessible(page, 'deposits');

    // The newest request, so the polls above (as many as the machine is slow) can't push it off the page.
    await createPayment(m, { amount: '1' });
    await page.goto(`${api.baseUrl}/dashboard/requests`);
    await assertAccessible(page, 'request log');
    const log = await page.locator('tbody').innerText();
    assert.match(log, /POST\s+\/v2\/payments\s+201/);
    assert.match(log, /pay-\d+-\d+-\d+/, 'the Idempotency-Key is shown');
    assert.doesNotMatch(await page.content(), new RegExp(m.cred.appSecret), 'never a secret');
    await shot(page, 'requests');

    await page.goto(`${api.baseUrl}/dashboard/credentials`);
    await assertAccessible(page, 'credentials');
    assert.match(await page.locator('main').innerText(), /Only an admin of your team can rotate/);

    await page.goto(`${api.baseUrl}/dashboard/audit`);
    await assertAccessible(page, 'audit');
    const audit = await page.locator('tbody').innerText();
    for (const action of [
      'user.invited:developer',
      'signed_in',
      'webhook_endpoint.created',
      'webhook_endpoint.test_sent',
      'webhook_endpoint.recovered',
    ]) {
      assert.match(audit, new RegExp(action.replace('.', '\\.')), action);
    }
    assert.match(audit, new RegExp(email));
  });
});

describe('Partner dashboard: who may do what', () => {
  let api: Awaited<ReturnType<typeof startDashboardApi>>;
  let context: BrowserContext;
  let page: Page;
  before(async () => {
    api = await startDashboardApi();
    context = await newContext('desktop');
    page = await context.newPage();
  });
  after(async () => {
    await context?.close();
    await api?.close();
  });

  test('a viewer reads but changes nothing; a form without its CSRF token is refused; a removed user is signed out', async () => {
    const app = await newApp();
    const email = `viewer-${Date.now()}@partner.example`;
    const user = await api.invite(app.appId, email, 'viewer');
    await signInByEmail(page, api.baseUrl, email);
    await page.goto(`${api.baseUrl}/dashboard/webhooks`);
    assert.equal(await page.getByRole('button', { name: 'Add endpoint' }).count(), 0, 'no form for a viewer');
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const post = (to: string, form: Record<string, string>) =>
      fetch(`${api.baseUrl}${to}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
      });
    const csrf = await page.locator('input[name=_csrf]').first().inputValue();
    const asViewer = await post('/dashboard/webhooks', { _csrf: csrf, url: 'https://example.com/hooks' });
    assert.equal(asViewer.status, 403, 'a viewer may not add an endpoint');
    const noToken = await post('/dashboard/logout', {});
    assert.equal(noToken.status, 403, 'no CSRF token, no change');
    const h = await getHarness();
    assert.equal(await h.db.prisma.webhookEndpoint.count({ where: { appId: app.appId } }), 0);

    const removed = await api.remove(app.appId, user.id);
    assert.equal(removed.id, user.id);
    await page.goto(`${api.baseUrl}/dashboard/webhooks`);
    assert.equal(new URL(page.url()).pathname, '/dashboard/login', 'the removed user is signed out');
  });

  test('an admin rotates the app secret with a fresh emailed code (shown once, and it authenticates) and the audit says who', async () => {
    const app = await newApp();
    const email = `admin-${Date.now()}@partner.example`;
    await api.invite(app.appId, email, 'admin');
    await signInByEmail(page, api.baseUrl, email);
    await page.goto(`${api.baseUrl}/dashboard/credentials`);
    // The session alone is not enough: no code, or a wrong one, rotates nothing.
    const code = await emailedCode(page, email);
    await page.getByLabel(/^Overlap/).fill('0');
    await page.getByLabel('Emailed code to rotate').fill(code === '000000' ? '000001' : '000000');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    assert.match(await page.getByRole('alert').innerText(), /Enter the code we just emailed you/);
    assert.equal((await call('/v2/partners/config', { credential: app })).status, 200, 'the secret is unchanged');
    await page.getByLabel(/^Overlap/).fill('0');
    await page.getByLabel('Emailed code to rotate').fill(code);
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const secret = await page.getByLabel('Secret').inputValue();
    assert.match(secret, /^sk_test_/);
    const fresh = await call('/v2/partners/config', { credential: { ...app, appSecret: secret } });
    assert.equal(fresh.status, 200, 'the new secret authenticates');
    const stale = await call('/v2/partners/config', { credential: app });
    assert.equal(stale.status, 401, 'with no overlap the old secret stops at once');
    await page.goto(`${api.baseUrl}/dashboard/audit`);
    assert.match(await page.locator('tbody').innerText(), new RegExp(`${email.replace('.', '\\.')}[\\s\\S]*app_secret\\.rotated`));
  });

  test("endpoints under the contract's rules: edit, disable, enable, rotate, archive; a URL with credentials or a second copy is refused on the page", async () => {
    const app = await newApp();
    const email = `rules-${Date.now()}@partner.example`;
    await api.invite(app.appId, email, 'developer');
    await signInByEmail(page, api.baseUrl, email);
    await page.goto(`${api.baseUrl}/dashboard/webhooks`);
    const add = async (url: string, events: string[] = []) => {
      await page.getByLabel(/^URL/).fill(url);
      for (const name of events) await page.getByLabel(name, { exact: true }).check();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
    };
    await add('https://user:pass@hooks.partner.example/in');
    assert.match(await page.getByRole('alert').innerText(), /credentials/i);
    await add('http://127.0.0.1:9/in', ['payment.succeeded', 'deposit.settled']);
    const first = await page.getByLabel('Secret').inputValue();
    await page.getByRole('link', { name: 'Done' }).click();
    const endpointPath = new URL(page.url()).pathname;
    await page.goto(`${api.baseUrl}/dashboard/webhooks`);
    await add('http://127.0.0.1:9/in');
    assert.match(await page.getByRole('alert').innerText(), /already|unique|exists/i, 'unique among active endpoints');
    await assertAccessible(page, 'a refused endpoint');

    await page.goto(`${api.baseUrl}${endpointPath}`);
    await page.getByLabel('Description').fill('x'.repeat(513));
    await page.locator('#description').evaluate((el: { removeAttribute(name: string): void }) => el.removeAttribute('maxlength'));
    await page.getByLabel('Description').fill('x'.repeat(513));
    await page.getByRole('button', { name: 'Save' }).click();
    assert.match(await page.getByRole('alert').innerText(), /description/);
    await page.getByLabel('Description').fill('Ledger sync');
    await page.getByLabel('deposit.settled', { exact: true }).uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    assert.match(await page.getByRole('status').innerText(), /saved/);
    const facts = () => page.locator('dl.facts').innerText();
    assert.match(await facts(), /Ledger sync[\s\S]*payment\.succeeded/);
    assert.doesNotMatch(await facts(), /deposit\.settled/);
    await page.getByRole('button', { name: 'Disable' }).click();
    assert.match(await facts(), /disabled/);
    assert.equal(await page.getByRole('button', { name: 'Send a test event' }).count(), 0, 'no test event to a disabled endpoint');
    await page.getByRole('button', { name: 'Enable' }).click();
    assert.match(await facts(), /enabled/);
    await page.getByRole('button', { name: 'Rotate signing secret' }).click();
    const second = await page.getByLabel('Secret').inputValue();
    assert.notEqual(second, first);
    await page.goto(`${api.baseUrl}${endpointPath}`);
    assert.match(await facts(), /Secret version\s+2/);
    await page.getByRole('button', { name: 'Archive' }).click();
    assert.match(await page.locator('main').innerText(), /archived: it receives nothing/);
    const h = await getHarness();
    const row = await h.db.prisma.webhookEndpoint.findFirstOrThrow({ where: { appId: app.appId } });
    assert.deepEqual([row.status, row.description, row.events], ['archived', 'Ledger sync', ['payment.succeeded']]);
  });

  test('an admin revokes the app only by typing its id and a fresh emailed code; afterwards its secret is refused', async () => {
    const app = await newApp();
    const email = `revoke-${Date.now()}@partner.example`;
    await api.invite(app.appId, email, 'admin');
    await signInByEmail(page, api.baseUrl, email);
    await page.goto(`${api.baseUrl}/dashboard/credentials`);
    const code = await emailedCode(page, email);
    await page.getByLabel('Type the app id to confirm').fill('app_wrong');
    await page.getByLabel('Emailed code to revoke').fill(code);
    await page.getByRole('button', { name: 'Revoke' }).click();
    assert.match(await page.getByRole('alert').innerText(), /Type the app id exactly/);
    assert.equal((await call('/v2/partners/config', { credential: app })).status, 200, 'still live');
    await page.getByLabel('Type the app id to confirm').fill(app.appId);
    await page.getByLabel('Emailed code to revoke').fill(code);
    await page.getByRole('button', { name: 'Revoke' }).click();
    assert.match(await page.getByRole('status').innerText(), /revoked/);
    assert.equal((await call('/v2/partners/config', { credential: app })).status, 401);
    await assertAccessible(page, 'credentials after revocation');
  });

  test('a code works once; wrong guesses spend it; at most 5 codes in 15 minutes; an unknown email is told the same', async () => {
    const h = await getHarness();
    const app = await newApp();
    const email = `throttle-${Date.now()}@partner.example`;
    await api.invite(app.appId, email, 'viewer');
    const login = async (body: Record<string, string>, to = '/dashboard/login') => {
      const form = await fetch(`${api.baseUrl}/dashboard/login`);
      const cookie = (form.headers.getSetCookie() ?? []).map((c) => c.split(';')[0]).join('; ');
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
      return fetch(`${api.baseUrl}${to}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...body, _csrf: csrf }).toString(),
      });
    };
    const unknown = await (await login({ email: `nobody-${Date.now()}@partner.example` })).text();
    const known = await (await login({ email })).text();
    const strip = (s: string) => s.replace(/value="[^"]*"/g, '').replace(/<strong>[^<]*<\/strong>/, '');
    assert.equal(strip(unknown), strip(known), 'the same page whether or not the email has access');
    const first = await h.mailbox.next(email, 0);
    const code = /\bis (\d{6})\b/.exec(first.text)![1]!;
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i += 1) assert.equal((await login({ email, code: wrong }, '/dashboard/login/code')).status, 401);
    assert.equal((await login({ email, code }, '/dashboard/login/code')).status, 401, 'five wrong guesses spent the code');
    for (let i = 0; i < 4; i += 1) await login({ email });
    assert.equal(await h.db.prisma.partnerSignInCode.count({ where: { email } }), 5);
    await login({ email });
    assert.equal(await h.db.prisma.partnerSignInCode.count({ where: { email } }), 5, 'a sixth code in 15 minutes is not made');
    // The mail goes out after the answer: wait for all five.
    const toEmail = () => h.mailbox.received.filter((r) => r.to.includes(email));
    await until(() => (toEmail().length >= 5 ? true : undefined), 'five codes mailed', 5000);
    const mails = toEmail().map((r) => /\bis (\d{6})\b/.exec(r.text)![1]!);
    assert.equal(mails.length, 5);
    const ok = await login({ email, code: mails.at(-1)! }, '/dashboard/login/code');
    assert.equal(ok.status, 303, 'the newest code signs in');
    assert.equal((await login({ email, code: mails.at(-1)! }, '/dashboard/login/code')).status, 401, 'once');
  });
});

describe('Partner dashboard: an environment without the webhooks module', () => {
  let api: Awaited<ReturnType<typeof startDashboardApi>>;
  let context: BrowserContext;
  let page: Page;
  before(async () => {
    const h = await getHarness();
    api = await startDashboardApi({ environments: sandboxWithout(h.environments, 'webhooks') });
    context = await newContext('desktop');
    page = await context.newPage();
  });
  after(async () => {
    await context?.close();
    await api?.close();
  });

  test("an admin's endpoint form is refused 424 naming the module, as the admin API refuses it, and no endpoint is made", async () => {
    const h = await getHarness();
    const app = await newApp();
    const email = `admin-${Date.now()}@partner.example`;
    await api.invite(app.appId, email, 'admin');
    await signInByEmail(page, api.baseUrl, email);
    await page.goto(`${api.baseUrl}/dashboard/webhooks`);
    await page.getByLabel(/^URL/).fill('https://example.com/hooks');
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/dashboard/webhooks'),
      page.getByRole('button', { name: 'Add endpoint' }).click(),
    ]);
    assert.equal(answer.status(), 424);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Request refused');
    assert.match(await page.getByRole('alert').innerText(), /webhooks/);
    await assertAccessible(page, 'the refusal');
    assert.equal(await h.db.prisma.webhookEndpoint.count({ where: { appId: app.appId } }), 0);
  });
});
