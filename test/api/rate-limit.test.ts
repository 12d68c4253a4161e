import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { basicAuth, newApp } from '../support/api-client';
import { getHarness, apiDepsOnHarness } from '../support/harness';
import { createApi } from '../../src/http/app';

test('a credential over its quota gets 429 rate_limited with Retry-After and RateLimit headers', async () => {
  const h = await getHarness();
  const api = createApi(await apiDepsOnHarness({
    config: { ...h.config, rateLimit: { points: 3, windowSeconds: 60 } },
  }));
  const server = api.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const { port } = server.address() as AddressInfo;
    const limited = await newApp();
    const other = await newApp();
    const get = (cred: typeof limited) =>
      fetch(`http://127.0.0.1:${port}/v2/partners/config`, { headers: { authorization: basicAuth(cred.appId, cred.appSecret) } });
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 4; i += 1) {
      last = await get(limited);
      statuses.push(last.status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    assert.ok(last);
    const body = (await last.json()) as { error: { code: string } };
    assert.equal(body.error.code, 'rate_limited');
    assert.ok(Number(last.headers.get('retry-after')) >= 1);
    assert.equal(last.headers.get('ratelimit-limit'), '3');
    assert.equal(last.headers.get('ratelimit-remaining'), '0');
    assert.ok(Number(last.headers.get('ratelimit-reset')) >= 0);
    // The quota is per credential: another app is unaffected.
    assert.equal((await get(other)).status, 200);
  } finally {
    server.close();
  }
});
