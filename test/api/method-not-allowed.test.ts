import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { listRoutes } from './fuzz/routes';
import { startAdminApi, type AdminApi } from '../webhooks/support/admin';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** node:http, not fetch: fetch refuses TRACE. */
function send(url: string, method: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A concrete path of a route template (`:accountId` -> `x1`), and a regex matching a template's paths. */
const concrete = (template: string) => template.replace(/:\w+/g, 'x1');
const matcher = (template: string) => new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]+')}$`);

describe('A method a path does not serve', () => {
  let api: AdminApi;
  /** Every path the app serves (every router: partner, client, public, open, checkout, admin) and its methods. */
  let paths: Map<string, Set<string>>;

  before(async () => {
    api = await startAdminApi({ allowPrivate: true, withEngine: true });
    const routes = listRoutes(api.app).map((r) => r.split(' ') as [string, string]);
    paths = new Map();
    for (const [, template] of routes) {
      const path = concrete(template);
      // Every template this path matches serves it (/v2/accounts/external/x1 is not /v2/accounts/{id}).
      const methods = routes.filter(([, t]) => matcher(t).test(path)).map(([m]) => m);
      if (methods.includes('GET')) methods.push('HEAD');
      paths.set(path, new Set(methods));
    }
  });
  after(() => api.close());

  test('answers 405 with Allow listing the methods of the path, in the error envelope, on every route (TRACE and a standard method)', async () => {
    assert.ok(paths.size >= 40, `only ${paths.size} paths`);
    for (const [path, allowed] of paths) {
      const other = METHODS.find((m) => !allowed.has(m));
      for (const method of ['TRACE', ...(other ? [other] : [])]) {
        const res = await send(`${api.baseUrl}${path}`, method);
        const name = `${method} ${path}`;
        assert.equal(res.status, 405, `${name}: ${res.status}`);
        const allow = (res.headers.allow ?? '')
          .split(',')
          .map((m) => m.trim())
          .filter(Boolean);
        assert.deepEqual(allow.sort(), [...allowed].sort(), `${name}: Allow`);
        assert.ok(res.headers['svc-version'], `${name}: Svc-Version`);
        if (method === 'HEAD') continue;
        assert.equal(res.body.error.code, 'method_not_allowed', name);
        assert.deepEqual([...res.body.error.details.allowedMethods].sort(), [...allowed].sort(), `${name}: details.allowedMethods`);
      }
    }
  });

  test('a path nothing serves is 404 not_found, whatever the method', async () => {
    for (const method of ['TRACE', 'GET', 'DELETE']) {
      const res = await send(`${api.baseUrl}/v2/no-such-resource`, method);
      assert.equal(res.status, 404, method);
      assert.equal(res.headers.allow, undefined);
      assert.equal(res.body.error.code, 'not_found');
    }
  });
});
