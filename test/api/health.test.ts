import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createApi } from '../../src/http/app';
import type { AddressInfo } from 'node:net';
import { createDatabase } from '../../src/db/client';
import { freePort } from '../../src/embedded/process';
import { connectTemporalGateway } from '../../src/temporal/gateway';
import { call } from '../support/api-client';
import { getHarness, apiDepsOnHarness } from '../support/harness';

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
      const api = createApi(await apiDepsOnHarness({
        db: s.db,
        temporalHealth: s.temporalHealth,
      }));
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
