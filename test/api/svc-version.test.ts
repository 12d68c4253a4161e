import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { basicAuth, newApp } from '../support/api-client';
import { getHarness } from '../support/harness';

/** node:http, not fetch: the header is sent exactly as given, empty included. */
function get(url: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('Svc-Version sent', () => {
  test('empty is a version that is not the pin: 400 api_version_mismatch (omitted, the pin applies)', async () => {
    const h = await getHarness();
    const cred = await newApp();
    const auth = { authorization: basicAuth(cred.appId, cred.appSecret) };
    const routes = [`/v2/partners/config`, `/v2/public/apps/${cred.appId}/payments/configuration`];
    for (const route of routes) {
      const empty = await get(`${h.baseUrl}${route}`, { ...auth, 'svc-version': '' });
      assert.equal(empty.status, 400, `${route}: ${JSON.stringify(empty.body)}`);
      assert.equal(empty.body.error.code, 'api_version_mismatch');
      assert.equal(empty.body.error.details.requestedVersion, '');
      assert.equal((await get(`${h.baseUrl}${route}`, auth)).status, 200, route);
      assert.equal((await get(`${h.baseUrl}${route}`, { ...auth, 'svc-version': h.environments.apiVersion })).status, 200, route);
    }
  });
});
