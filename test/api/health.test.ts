import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createApi } from '../../src/http/app';
import type { AddressInfo } from 'node:net';
import { createDatabase, type Database } from '../../src/db/client';
import { freePort } from '../../src/embedded/process';
import { connectTemporalGateway } from '../../src/temporal/gateway';
import { call } from '../support/api-client';
import { getHarness, apiDepsOnHarness } from '../support/harness';
import { until } from '../support/until';

test('GET /healthz answers 200 when PostgreSQL and Temporal both answer', async () => {
  const res = await call('/healthz');
  assert.equal(res.status, 200);
  assert.equal(res.body.status, 'ok');
  assert.equal(res.body.checks.postgres.ok, true);
  assert.equal(res.body.checks.temporal.ok, true);
});

test('GET /healthz answers 503 when PostgreSQL or Temporal is unreachable', async () => {
  const h = await getHarness();
  const deadPort = await freePort();
  const deadDb = createDatabase({ url: `postgresql://nobody@127.0.0.1:${deadPort}/none`, poolMax: 1, acquireTimeoutMs: 1000 });
  const liveTemporal = () => h.engine.ping();
  const probeDeadTemporal = async () => {
    const engine = await connectTemporalGateway({ address: `127.0.0.1:${deadPort}`, namespace: 'default', taskQueue: 'none' });
    await engine.ping();
  };
  const scenarios = [
    { db: deadDb, temporalHealth: liveTemporal, down: 'postgres' },
    { db: h.db, temporalHealth: probeDeadTemporal, down: 'temporal' },
  ] as const;
  try {
    for (const s of scenarios) {
      const api = createApi(
        await apiDepsOnHarness({
          db: s.db,
          temporalHealth: s.temporalHealth,
        }),
      );
      const server = api.listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      try {
        const { port } = server.address() as AddressInfo;
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        const body = (await res.json()) as { status: string; checks: Record<string, { ok: boolean }> };
        assert.equal(res.status, 503, s.down);
        assert.equal(body.status, 'unavailable');
        assert.equal(body.checks[s.down]?.ok, false);
        assert.equal(body.checks[s.down === 'postgres' ? 'temporal' : 'postgres']?.ok, true);
      } finally {
        server.close();
      }
    }
  } finally {
    await deadDb.close();
  }
});

/** The harness's database, with every `$queryRaw` (the /healthz probe's `SELECT 1`) counted. */
async function countingDatabase(): Promise<{ db: Database; queries: () => number }> {
  const h = await getHarness();
  let queries = 0;
  const prisma = new Proxy(h.db.prisma, {
    get(target, prop) {
      if (prop === '$queryRaw') {
        return (...args: Parameters<typeof target.$queryRaw>) => {
          queries += 1;
          return target.$queryRaw(...args);
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { db: { ...h.db, prisma, close: () => h.db.close() }, queries: () => queries };
}

async function listenHealth(db: Database, temporalHealth: () => Promise<void>, probeIntervalMs: number) {
  const h = await getHarness();
  const api = createApi(await apiDepsOnHarness({ db, temporalHealth, config: { ...h.config, health: { probeIntervalMs } } }));
  const server = api.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

test('GET /healthz answers many calls, at once and one after another, from one probe of PostgreSQL and Temporal per window', async () => {
  const h = await getHarness();
  const { db, queries } = await countingDatabase();
  let temporalProbes = 0;
  const api = await listenHealth(
    db,
    async () => {
      temporalProbes += 1;
      await h.engine.ping();
    },
    60_000,
  );
  try {
    const together = await Promise.all(Array.from({ length: 20 }, () => call('/healthz', { baseUrl: api.baseUrl })));
    const inTurn = [];
    for (let i = 0; i < 10; i += 1) inTurn.push(await call('/healthz', { baseUrl: api.baseUrl }));
    for (const res of [...together, ...inTurn]) {
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.status, 'ok');
    }
    assert.equal(temporalProbes, 1, 'Temporal probed once');
    assert.equal(queries(), 1, 'PostgreSQL probed once');
  } finally {
    api.close();
  }
});

test('GET /healthz probes again once its last probe is older than the window, and answers 503 when that probe fails', async () => {
  const { db, queries } = await countingDatabase();
  let temporalProbes = 0;
  const api = await listenHealth(
    db,
    async () => {
      temporalProbes += 1;
      if (temporalProbes > 1) throw new Error('Temporal went away');
    },
    200,
  );
  try {
    assert.equal((await call('/healthz', { baseUrl: api.baseUrl })).status, 200);
    const down = await until(async () => {
      const res = await call('/healthz', { baseUrl: api.baseUrl, allowServerError: true });
      return res.status === 503 ? res : undefined;
    }, 'a /healthz answer from the probe after the window');
    assert.equal(down.body.checks.temporal.ok, false);
    assert.equal(down.body.checks.postgres.ok, true);
    assert.equal(down.headers.get('retry-after'), '5');
    assert.equal(temporalProbes, 2, 'one probe per window');
    assert.equal(queries(), 2);
  } finally {
    api.close();
  }
});
