import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { listenApi } from '../support/bounded-api';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import { axeViolations } from '../support/axe';

export const ADMIN_TOKEN = 'dashboard-test-admin-token-0123456789abcdef';

/** The API with an admin token (to invite) and private webhook destinations (a local receiver), on the shared harness. */
export async function startDashboardApi() {
  const h = await getHarness();
  const api = await listenApi(
    await apiDepsOnHarness({
      config: { ...h.config, admin: { apiToken: ADMIN_TOKEN }, webhooks: { ...h.config.webhooks, allowPrivateDestinations: true } },
      engine: h.engine,
    }),
  );
  return {
    ...api,
    async invite(appId: string, email: string, role: string) {
      const res = await fetch(`${api.baseUrl}/admin/v1/apps/${appId}/dashboard-users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email, role, actor: 'ops@example.com' }),
      });
      const body = (await res.json()) as { user: { id: string } };
      assert.equal(res.status, 201, JSON.stringify(body));
      return body.user;
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
