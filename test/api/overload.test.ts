import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import http from 'node:http';
import { createPublicClient, http as viemHttp } from 'viem';
import { createDatabase } from '../../src/db/client';
import { classifyFailure } from '../../src/domain/requests/failure-classes';
import { connectTemporalGateway } from '../../src/temporal/gateway';
import { call, newApp } from '../support/api-client';
import { apiDepsOnHarness, getHarness } from '../support/harness';
import { newMerchant } from '../support/fixtures';
import { listenApi } from '../support/bounded-api';
import { until } from '../support/until';

/** A TCP relay to Temporal that the test can cut, as if the server went away under a running API. */
async function relayTo(target: string): Promise<{ address: string; cut(): Promise<void> }> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: relayPort } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${relayPort}`,
    cut: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

describe('overload and upstream failures answer 503 fast, never 500', () => {
  test('an API pool with no free connection answers 503 service_unavailable with Retry-After, and serves again once one is free', async () => {
    const h = await getHarness();
    const tiny = createDatabase({ url: h.databaseUrl, poolMax: 1, acquireTimeoutMs: 200 });
    const api = await listenApi(await apiDepsOnHarness({ db: tiny }));
    const cred = await newApp();
    const held = await tiny.pool.connect();
    try {
      const refused = await call('/v2/partners/config', { baseUrl: api.baseUrl, credential: cred });
      assert.equal(refused.status, 503, refused.text);
      assert.equal(refused.headers.get('retry-after'), '1');
      assert.deepEqual(refused.body, {
        error: { code: 'service_unavailable', message: 'The service is at capacity; retry after the Retry-After interval' },
      });
      // The errors really raised through Prisma are the ones the classifier knows: pg-pool's acquire
      // timeout, and a transaction's maxWait running out first (P2028, seen in the benchmark).
      const capacity = (err: unknown) => {
        assert.deepEqual(classifyFailure(err), { kind: 'capacity', source: 'database' });
        return true;
      };
      await assert.rejects(tiny.prisma.app.findFirst(), capacity);
      await assert.rejects(
        tiny.prisma.$transaction(async (tx) => tx.app.findFirst(), { maxWait: 50 }),
        capacity,
      );
    } finally {
      held.release();
    }
    try {
      const served = await call('/v2/partners/config', { baseUrl: api.baseUrl, credential: cred });
      assert.equal(served.status, 200, served.text);
    } finally {
      await api.close();
      await tiny.close();
    }
  });

  test('past the admission gate a write is refused at once with 503 and Retry-After, before its credential or body is read, and the gate reopens', async () => {
    const h = await getHarness();
    // A pool of one connection, held by the test: an admitted write then waits inside, in flight.
    const tiny = createDatabase({ url: h.databaseUrlOf('api'), poolMax: 1, acquireTimeoutMs: 60_000 });
    const api = await listenApi(
      await apiDepsOnHarness({
        db: tiny,
        config: { ...h.config, http: { ...h.config.http, admission: { maxInFlight: 1, maxQueued: 0, maxQueueWaitMs: 60_000 } } },
      }),
    );
    const cred = await newApp();
    const account = (externalUserId: string) => call('/v2/accounts', { baseUrl: api.baseUrl, credential: cred, body: { externalUserId } });
    const held = await tiny.pool.connect();
    let released = false;
    try {
      const admitted = account('admitted-first');
      // The first write is in flight once the gate has let it in (its connection wait is inside).
      await until(() => tiny.pool.waitingCount > 0, 'the admitted write waiting for a connection of the pool', 30_000);
      const refused = await call('/v2/accounts', {
        baseUrl: api.baseUrl,
        headers: { authorization: `Basic ${Buffer.from('app_unknown:not-read').toString('base64')}` },
        body: { externalUserId: 'refused' },
      });
      assert.equal(refused.status, 503, refused.text);
      assert.equal(refused.headers.get('retry-after'), '1');
      assert.equal(refused.body.error.code, 'service_unavailable');
      held.release();
      released = true;
      assert.equal((await admitted).status, 201);
      assert.equal((await account('after-reopen')).status, 201, 'the gate reopens once the write is done');
      const made = await h.db.prisma.account.findMany({ where: { appId: cred.appId }, select: { externalUserId: true } });
      assert.deepEqual(made.map((a) => a.externalUserId).sort(), ['admitted-first', 'after-reopen'], 'the refused write created nothing');
    } finally {
      if (!released) held.release();
      await api.close();
      await tiny.close();
    }
  });

  test('Temporal gone under a running API: creating a Payment answers 503 payment_provider_unavailable with Retry-After, and the retry with the same key completes it', async () => {
    const h = await getHarness();
    const relay = await relayTo(h.env.address);
    const gateway = await connectTemporalGateway({
      address: relay.address,
      namespace: h.env.namespace ?? 'default',
      taskQueue: h.taskQueue,
      rpcTimeoutMs: 500,
    });
    const api = await listenApi(await apiDepsOnHarness({ engine: gateway }));
    const m = await newMerchant();
    const key = `temporal-gone-${Date.now()}`;
    const body = {
      intent: 'receive',
      amount: '3',
      assetCode: 'USDC',
      chainId: h.chainId,
      destination: { type: 'upa', accountId: m.accountId },
    };
    try {
      await relay.cut();
      const refused = await call('/v2/payments', { baseUrl: api.baseUrl, credential: m.cred, headers: { 'idempotency-key': key }, body });
      assert.equal(refused.status, 503, refused.text);
      assert.equal(refused.headers.get('retry-after'), '5');
      assert.equal(refused.body.error.code, 'payment_provider_unavailable');
      // The error the gateway really raises (the client's own retries, then the call's deadline) is classified.
      await assert.rejects(gateway.describeWorkflow('any'), (err) => {
        assert.deepEqual(classifyFailure(err), { kind: 'unreachable', source: 'temporal' });
        return true;
      });
    } finally {
      await api.close();
      await gateway.close();
    }
    // The spec's retry rule: same key, same body, once the engine is back (the harness's API).
    const retried = await call('/v2/payments', { credential: m.cred, headers: { 'idempotency-key': key }, body });
    assert.equal(retried.status, 201, retried.text);
    assert.equal((await h.engine.describeWorkflow(retried.body.payment.id)).status, 'RUNNING');
    assert.equal(await h.db.prisma.payment.count({ where: { recipientAccountId: m.accountId } }), 1);
  });

  test('a chain RPC that is gone answers 503 with Retry-After and one that answers an error 502, with the Payment variants on Payment endpoints', async () => {
    // No endpoint reads the chain today: a route that does stands in for the first one that will.
    const badRequest = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"bad"}'));
    });
    await new Promise<void>((resolve) => badRequest.listen(0, '127.0.0.1', resolve));
    const gone = net.createServer();
    await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
    const gonePort = (gone.address() as AddressInfo).port;
    await new Promise((resolve) => gone.close(resolve));
    const rpc = {
      gone: `http://127.0.0.1:${gonePort}`,
      error: `http://127.0.0.1:${(badRequest.address() as AddressInfo).port}`,
    };
    const readChain = async (kind: string) => {
      // No retries: one attempt shows the mapping (the service's transport retries 3 times).
      const client = createPublicClient({
        transport: viemHttp(rpc[kind as keyof typeof rpc], { timeout: 500, retryCount: 0 }),
        cacheTime: 0,
      });
      return { block: (await client.getBlockNumber()).toString() };
    };
    const api = await listenApi(
      await apiDepsOnHarness({
        extraRoutes: [
          (router) => {
            router.get('/v2/chain-probe/:kind', async (ctx) => {
              ctx.body = await readChain(ctx.params.kind!);
            });
            router.get('/v2/payments/:paymentId/chain-probe/:kind', async (ctx) => {
              ctx.body = await readChain(ctx.params.kind!);
            });
          },
        ],
      }),
    );
    const cred = await newApp();
    try {
      const answers = [];
      for (const path of [
        '/v2/chain-probe/gone',
        '/v2/payments/pay_x/chain-probe/gone',
        '/v2/chain-probe/error',
        '/v2/payments/pay_x/chain-probe/error',
      ]) {
        const res = await call(path, { baseUrl: api.baseUrl, credential: cred });
        answers.push([path, res.status, res.body?.error?.code, res.headers.get('retry-after')]);
      }
      assert.deepEqual(answers, [
        ['/v2/chain-probe/gone', 503, 'provider_unavailable', '5'],
        ['/v2/payments/pay_x/chain-probe/gone', 503, 'payment_provider_unavailable', '5'],
        // The provider's own 400 is its error, not the client's.
        ['/v2/chain-probe/error', 502, 'provider_failure', null],
        ['/v2/payments/pay_x/chain-probe/error', 502, 'payment_provider_error', null],
      ]);
    } finally {
      await api.close();
      await new Promise((resolve) => badRequest.close(resolve));
    }
  });
});
