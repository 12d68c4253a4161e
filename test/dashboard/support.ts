import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import type { TEnvironments } from '../../src/config/environments';
import { listenAdminApi, listenApi } from '../support/bounded-api';
import { createTestOperator } from '../support/operators';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import { axeViolations } from '../support/axe';

/**
 * The API with private webhook destinations (a local receiver), on the shared harness, and the admin
 * plane of the same dependencies on a listener of its own, where an admin operator invites and removes
 * dashboard users with their token.
 */
export async function startDashboardApi(opts: { environments?: TEnvironments } = {}) {
  const h = await getHarness();
  const deps = await apiDepsOnHarness({
    config: { ...h.config, webhooks: { ...h.config.webhooks, allowPrivateDestinations: true } },
    engine: h.engine,
    ...opts,
  });
  const operator = await createTestOperator('admin');
  const api = await listenApi(deps);
  const adminApi = await listenAdminApi(deps);
  const asAdmin = async (path: string, body: object) => {
    const res = await fetch(`${adminApi.baseUrl}/admin/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operator.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { user: { id: string; invitedBy: string } } };
  };
  return {
    ...api,
    /** The admin operator who invites and removes (the audit's actor). */
    operator,
    async invite(appId: string, email: string, role: string) {
      const res = await asAdmin(`/apps/${appId}/dashboard-users`, { email, role });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.equal(res.body.user.invitedBy, operator.email, 'the inviter is the operator the token belongs to');
      return res.body.user;
    },
    async remove(appId: string, userId: string) {
      const res = await asAdmin(`/apps/${appId}/dashboard-users/${userId}/removal`, {});
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.user;
    },
    async close() {
      await Promise.all([api.close(), adminApi.close()]);
    },
  };
}

/** A partner's webhook receiver that can be taken down (503 to everything) and brought back. */
export interface PartnerReceiver {
  url: string;
  down: boolean;
  received: Array<{ headers: IncomingHttpHeaders; rawBody: Buffer; answered: number }>;
  close(): Promise<void>;
}

export async function startPartnerReceiver(): Promise<PartnerReceiver> {
  const receiver: PartnerReceiver = { url: '', down: false, received: [], close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answered = receiver.down ? 503 : 200;
      receiver.received.push({ headers: req.headers, rawBody: Buffer.concat(chunks), answered });
      res.writeHead(answered, { 'content-type': 'text/plain' });
      res.end(receiver.down ? 'down for maintenance' : 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** Signs in as a partner user: email, then the code the real mail path delivered to the test's SMTP server. */
export async function signInByEmail(page: Page, baseUrl: string, email: string): Promise<void> {
  const h = await getHarness();
  await page.context().clearCookies();
  await page.goto(`${baseUrl}/dashboard`);
  assert.equal(new URL(page.url()).pathname, '/dashboard/login');
  const before = h.mailbox.received.length;
  await page.getByLabel('Email').fill(email);
  await page.getByRole('button', { name: 'Email me a code' }).click();
  await page.waitForURL('**/dashboard/login');
  const mail = await h.mailbox.next(email, before);
  const code = /\bis (\d{6})\b/.exec(mail.text)?.[1];
  assert.ok(code, `a 6-digit code in the mail: ${mail.text}`);
  await page.getByLabel('Sign-in code').fill(code);
  await page.getByLabel('Sign-in code').press('Enter');
  await page.waitForURL(`${baseUrl}/dashboard`);
}

/** On the credentials page: asks for a fresh code and answers the one the real mail path delivered. */
export async function emailedCode(page: Page, email: string): Promise<string> {
  const h = await getHarness();
  const before = h.mailbox.received.length;
  await page.getByRole('button', { name: 'Email me a code' }).click();
  assert.match(await page.getByRole('status').innerText(), /We emailed a code/);
  const mail = await h.mailbox.next(email, before);
  const code = /\bis (\d{6})\b/.exec(mail.text)?.[1];
  assert.ok(code, `a 6-digit code in the mail: ${mail.text}`);
  return code;
}

/** The page passes axe-core's WCAG 2.1 A/AA rules; `what` names it in the failure. */
export async function assertAccessible(page: Page, what: string): Promise<void> {
  assert.deepEqual(await axeViolations(page), [], `accessibility of ${what}`);
}
