import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { basicAuth, call, clientTokenFor, newApp, uniqueUserId } from '../support/api-client';
import { getHarness, apiDepsOnHarness } from '../support/harness';
import { createApi } from '../../src/http/app';
import { awayFromWindowEnd } from '../support/quota-window';

test('a credential over its quota gets 429 rate_limited with Retry-After and RateLimit headers', async () => {
  const h = await getHarness();
  const api = createApi(
    await apiDepsOnHarness({
      config: { ...h.config, rateLimit: { points: 3, windowSeconds: 60 } },
    }),
  );
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
    await awayFromWindowEnd(60);
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

test("a client token over its account's quota gets 429 while the partner's quota and another account's token are untouched", async () => {
  const h = await getHarness();
  const api = createApi(
    await apiDepsOnHarness({
      engine: h.engine,
      chains: h.chain.chains,
      client: { engine: h.engine },
      config: { ...h.config, rateLimit: { points: 50, windowSeconds: 3600 }, clientRateLimit: { points: 3, windowSeconds: 3600 } },
    }),
  );
  const server = api.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // Set up on the suite's API: its quota has another window, so nothing here counts in this API's.
    const cred = await newApp();
    const accountOf = async () =>
      (await call('/v2/accounts', { credential: cred, body: { externalUserId: uniqueUserId('payer') } })).body.account.id as string;
    const [spender, bystander] = [await clientTokenFor(cred, await accountOf()), await clientTokenFor(cred, await accountOf())];
    const partner = () => call('/v2/partners/config', { credential: cred, baseUrl });
    // A wrong payment secret is refused after the quota is counted: such refusals spend only the account's quota.
    const asClient = (token: string) =>
      call('/v2/client/me/payments/payment_not_yours', {
        baseUrl,
        headers: { authorization: `Bearer ${token}`, 'x-svc-payment-secret': `payment_not_yours_secret_${'0'.repeat(40)}` },
      });

    await awayFromWindowEnd(3600);
    const before = await partner();
    assert.equal(before.status, 200);
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof asClient>> | undefined;
    for (let i = 0; i < 6; i += 1) {
      last = await asClient(spender);
      statuses.push(last.status);
    }
    assert.deepEqual(statuses, [401, 401, 401, 429, 429, 429]);
    assert.ok(last);
    assert.equal(last.body.error.code, 'rate_limited');
    assert.ok(Number(last.headers.get('retry-after')) >= 1);
    assert.equal(last.headers.get('ratelimit-limit'), '3');
    assert.equal(last.headers.get('ratelimit-remaining'), '0');

    const after = await partner();
    assert.equal(after.status, 200);
    assert.equal(after.headers.get('ratelimit-limit'), '50');
    assert.equal(
      Number(after.headers.get('ratelimit-remaining')),
      Number(before.headers.get('ratelimit-remaining')) - 1,
      "the client's requests spent none of the partner's quota",
    );

    const other = await asClient(bystander);
    assert.equal(other.status, 401, "another account's token still reaches the payment-secret check");
    assert.equal(other.headers.get('ratelimit-remaining'), '2');
  } finally {
    server.close();
  }
});
