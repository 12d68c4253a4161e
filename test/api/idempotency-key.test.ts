import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { basicAuth, call, responseChecker } from '../support/api-client';
import { createPayment, newMerchant, type Merchant } from '../support/fixtures';
import { startAdminApi, type AdminApi } from '../webhooks/support/admin';
import { listRoutes } from './fuzz/routes';

/** Keys outside 1-256 printable ASCII characters (`^[ -~]+$`), as a buggy client sends them. */
const BAD_KEYS: Array<[string, string]> = [
  ['empty', ''],
  ['257 characters', 'k'.repeat(257)],
  ['a tab', 'order\t1'],
  ['a Latin-1 letter', 'caf\u00e9-1'],
];

/** node:http, not fetch: fetch refuses some of these header values. */
function send(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${baseUrl}${path}`,
      {
        method,
        agent: false,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('latin1')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const refusedForKey = (text: string) => {
  try {
    const { error } = JSON.parse(text) as { error: { code: string; details?: { fields?: Array<{ field: string }> } } };
    return error.code === 'bad_request' && (error.details?.fields ?? []).some((f) => f.field === 'header.Idempotency-Key');
  } catch {
    return false;
  }
};

describe('Idempotency-Key format on every endpoint that takes one', () => {
  let api: AdminApi;
  let merchant: Merchant;
  let paymentId: string;
  let paymentSecret: string;
  let clientToken: string;

  before(async () => {
    api = await startAdminApi({ allowPrivate: true, withEngine: true });
    merchant = await newMerchant();
    const created = await createPayment(merchant);
    assert.equal(created.status, 201, created.text);
    paymentId = created.body.payment.id;
    paymentSecret = created.body.checkout.clientSecret;
    const token = await call('/v2/client/auth/exchange', { credential: merchant.cred, body: { accountId: merchant.accountId } });
    clientToken = token.body.accessToken;
  });
  after(() => api.close());

  /** The route's path with real ids, and the credentials its router wants. */
  function target(template: string): { path: string; headers: Record<string, string> } {
    const ids: Record<string, string> = {
      accountId: merchant.accountId,
      paymentId,
      optionId: 'pay_option_x1',
      appId: merchant.cred.appId,
      bankAccountId: 'bank_account_x1',
    };
    const path = template.replace(/:(\w+)/g, (_, name: string) => ids[name] ?? 'x1');
    if (template.startsWith('/v2/client/me/'))
      return { path, headers: { authorization: `Bearer ${clientToken}`, 'x-svc-payment-secret': paymentSecret } };
    if (template.startsWith('/v2/public/')) return { path, headers: {} };
    return { path, headers: { authorization: basicAuth(merchant.cred.appId, merchant.cred.appSecret) } };
  }

  test('a malformed key is 400 naming header.Idempotency-Key on each route the document lists it for, and on no other', async () => {
    const checker = await responseChecker();
    const routes = listRoutes(api.app)
      .map((r) => r.split(' ') as [string, string])
      .filter(([method, template]) => template.startsWith('/v2/') && method !== 'GET');
    const documented = routes.filter(([method, template]) => {
      const op = checker.operationFor(method, template.replace(/:\w+/g, 'x1'))?.operation as
        { parameters?: Array<{ $ref?: string; name?: string }> } | undefined;
      return (op?.parameters ?? []).some((p) => /\/IdempotencyKey(Required)?$/.test(p.$ref ?? '') || p.name === 'Idempotency-Key');
    });
    assert.ok(documented.length >= 14, `only ${documented.length} routes document Idempotency-Key`);
    for (const [method, template] of routes) {
      const { path, headers } = target(template);
      const takesKey = documented.some(([m, t]) => m === method && t === template);
      for (const [what, key] of takesKey ? BAD_KEYS : BAD_KEYS.slice(0, 1)) {
        const res = await send(api.baseUrl, method, path, { ...headers, 'idempotency-key': key }, '{}');
        const name = `${method} ${template} with ${what} key`;
        if (takesKey) {
          assert.equal(res.status, 400, `${name}: ${res.status} ${res.text.slice(0, 300)}`);
          assert.ok(refusedForKey(res.text), `${name}: ${res.text.slice(0, 300)}`);
        } else {
          assert.ok(!refusedForKey(res.text), `${name}: refused for a header its document does not list`);
        }
      }
    }
  });
});
