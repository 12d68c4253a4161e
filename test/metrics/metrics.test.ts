import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, newApp } from '../support/api-client';
import { getHarness } from '../support/harness';
import { eventually, mine } from '../support/chain';
import { until } from '../support/until';
import { withWorkerStopped } from '../support/bounded-api';
import { createPayment, newMerchant } from '../support/fixtures';
import { startAdminApi, METRICS_TOKEN, type AdminApi } from '../webhooks/support/admin';
import { newAccountWithEvent, delivered, dispatch, ensureTestDispatcher, stopTestDispatcher } from '../webhooks/support/flow';
import { startReceiver, type Receiver } from '../webhooks/support/receiver';
import { raiseAlert, resolveAlerts } from '../../src/domain/monitoring/alerts';
import { LEDGER_DIFFERENCE } from '../../src/domain/ledger/reconcile';
import { createServiceMetrics } from '../../src/http/metrics';
import { family, parseExposition, sampleValue, samplesOf, type Exposition } from './support/scrape';

describe('Prometheus metrics at /metrics (what operators watch)', () => {
  let admin: AdminApi;
  let receiver: Receiver;
  before(async () => {
    // The whole API with METRICS_TOKEN set, the harness's worker runtime behind it.
    admin = await startAdminApi({ allowPrivate: true, withEngine: true });
    receiver = await startReceiver();
    await ensureTestDispatcher();
  });
  after(async () => {
    await stopTestDispatcher('suite done');
    await admin.close();
    await receiver.close();
  });

  async function scrape(): Promise<Exposition> {
    const res = await fetch(`${admin.adminBaseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const text = await res.text();
    assert.equal(res.status, 200, text.slice(0, 300));
    return parseExposition(text);
  }

  test('answers only METRICS_TOKEN on the admin listener: 404 on the partner port, 401 without it, with a wrong one or an operator token, 200 with it', async () => {
    const h = await getHarness();
    for (const base of [h.baseUrl, admin.baseUrl]) {
      const absent = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      assert.equal(absent.status, 404, `the partner port ${base} serves no /metrics`);
      assert.equal(((await absent.json()) as { error: { code: string } }).error.code, 'not_found');
    }

    const missing = await fetch(`${admin.adminBaseUrl}/metrics`);
    assert.equal(missing.status, 401);
    assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'unauthorized');
    assert.match(missing.headers.get('www-authenticate') ?? '', /^Bearer /);
    const wrong = await fetch(`${admin.adminBaseUrl}/metrics`, {
      headers: { authorization: 'Bearer not-the-metrics-token-0123456789abcdef01' },
    });
    assert.equal(wrong.status, 401);
    const operator = await fetch(`${admin.adminBaseUrl}/metrics`, { headers: { authorization: `Bearer ${admin.token}` } });
    assert.equal(operator.status, 401, 'an operator token is not the scrape credential');
    const app = await newApp();
    const basic = await call('/metrics', { baseUrl: admin.adminBaseUrl, credential: app });
    assert.equal(basic.status, 401, 'a partner credential is no admin credential');
    const readOnly = await fetch(`${admin.adminBaseUrl}/admin/v1/alerts`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.equal(readOnly.status, 401, 'the scrape credential opens nothing but /metrics');

    const ok = await fetch(`${admin.adminBaseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    assert.equal(ok.headers.get('cache-control'), 'no-store');
    const families = parseExposition(await ok.text());
    // Every scrape-time reading succeeded, the Temporal runtime's included.
    const up = samplesOf(families, 'partner_payments_collector_up').map((s) => [s.labels.collector, s.value]);
    assert.deepEqual(Object.fromEntries(up), {
      alerts: 1,
      chain_scanner: 1,
      deposits_status: 1,
      payments_operational_state: 1,
      payments_status: 1,
      settlements: 1,
      temporal_runtime: 1,
      webhook_deliveries: 1,
    });
  });

  test('counts HTTP requests by route template, method and status, never by the raw path', async () => {
    const merchant = await newMerchant();
    const created = await call('/v2/payments', {
      baseUrl: admin.baseUrl,
      credential: merchant.cred,
      headers: { 'idempotency-key': `metrics-${process.pid}-${Date.now()}` },
      body: {
        intent: 'receive',
        amount: '10',
        assetCode: 'USDC',
        chainId: 31337,
        destination: { type: 'upa', accountId: merchant.accountId },
      },
    });
    assert.equal(created.status, 201, created.text);
    const paymentId: string = created.body.payment.id;
    const read = await call(`/v2/payments/${paymentId}`, { baseUrl: admin.baseUrl, credential: merchant.cred });
    assert.equal(read.status, 200);
    const missing = await call('/v2/payments/payment_0000metrics0000', { baseUrl: admin.baseUrl, credential: merchant.cred });
    assert.equal(missing.status, 404);
    const nowhere = await call(`/no/such/route/${merchant.accountId}`, { baseUrl: admin.baseUrl, credential: merchant.cred });
    assert.equal(nowhere.status, 404);

    const families = await scrape();
    const requests = (labels: Record<string, string>) => sampleValue(families, 'partner_payments_http_requests_total', labels);
    assert.ok(requests({ route: '/v2/payments', method: 'POST', status: '201' }) >= 1);
    assert.ok(requests({ route: '/v2/payments/:paymentId', method: 'GET', status: '200' }) >= 1);
    assert.ok(requests({ route: '/v2/payments/:paymentId', method: 'GET', status: '404' }) >= 1);
    assert.ok(requests({ route: 'unmatched', method: 'GET', status: '404' }) >= 1);
    assert.equal(family(families, 'partner_payments_http_request_duration_seconds').type, 'HISTOGRAM');
    const createLabels = { route: '/v2/payments', method: 'POST', status: '201' };
    assert.ok(sampleValue(families, 'partner_payments_http_request_duration_seconds_count', createLabels) >= 1);
    assert.ok(sampleValue(families, 'partner_payments_http_request_duration_seconds_sum', createLabels) > 0);

    const labelValues = families.samples.flatMap((s) => Object.values(s.labels));
    assert.ok(labelValues.includes('/v2/payments/:paymentId'));
    // Ids are a prefix and 22 random characters (src/domain/values/ids.ts); statuses such as requires_payment_method are no ids.
    const leaked = labelValues.filter(
      (v) => /(payment|acct|app)_[A-Za-z0-9]{22}/.test(v) || v.includes(paymentId) || v.includes(merchant.accountId),
    );
    assert.deepEqual(leaked, [], 'no id in any label');
  });

  test('counts Payments by status and operational state from PostgreSQL: a new Payment adds exactly one to its status', async () => {
    const merchant = await newMerchant();
    const before = await scrape();
    // Created through the harness's API (another process, as far as these counts know).
    const created = await createPayment(merchant);
    assert.equal(created.status, 201, created.text);
    const status: string = created.body.payment.status;
    const after = await scrape();
    assert.equal(
      sampleValue(after, 'partner_payments_payments', { status }),
      sampleValue(before, 'partner_payments_payments', { status }) + 1,
    );
    const normal = (e: Exposition) => sampleValue(e, 'partner_payments_payments_operational_state', { operational_state: 'normal' });
    assert.equal(normal(after), normal(before) + 1, 'a new Payment is in the normal operational state');
    const h = await getHarness();
    assert.equal(sampleValue(after, 'partner_payments_payments', { status }), await h.db.prisma.payment.count({ where: { status } }));
    for (const name of ['partner_payments_settlement_legs', 'partner_payments_fund_returns'])
      assert.equal(family(after, name).type, 'GAUGE');
  });

  test('counts webhook deliveries by outcome, and the backlog: a delivery waiting on an endpoint that is down is counted and ages the oldest waiting delivery, until it is delivered', async () => {
    const h = await getHarness();
    const app = await newApp();
    // Down for two attempts (503), up for the third and last.
    const hook = receiver.hook([{ status: 503 }, { status: 503 }]);
    const endpoint = await admin.call('POST', `/admin/v1/apps/${app.appId}/webhook-endpoints`, { url: hook.url });
    assert.equal(endpoint.status, 201, JSON.stringify(endpoint.body));
    const endpointId: string = endpoint.body.endpoint.id;
    const { eventId } = await newAccountWithEvent(app);
    await dispatch();
    // Its first attempt failed: its next one is 30 s of workflow time away, and no time skips while
    // nothing awaits a workflow result, so it stays in the backlog while the test reads it.
    const waiting = await until(async (saw) => {
      const row = await h.db.prisma.webhookDelivery.findUnique({ where: { eventId_endpointId: { eventId, endpointId } } });
      saw(row && { status: row.status, attempts: row.attemptCount });
      return row?.status === 'retrying' ? row : undefined;
    }, 'the delivery to fail its first attempt');
    const ages = async () => {
      const [row] = await h.db.prisma.$queryRaw<Array<{ ours: number; oldest: number | null }>>`
        SELECT extract(epoch FROM now() - ${waiting.queuedAt ?? waiting.createdAt}::timestamptz)::float8 AS ours,
               (SELECT extract(epoch FROM now() - min(coalesce(queued_at, created_at)))::float8 FROM webhook_deliveries WHERE status IN ('pending', 'retrying')) AS oldest`;
      return row!;
    };
    const before = await ages();
    const during = await scrape();
    const after = await ages();
    const age = sampleValue(during, 'partner_payments_webhook_oldest_waiting_delivery_age_seconds');
    assert.ok(before.ours > 0, `ours has waited ${before.ours} s`);
    // The oldest waiting delivery is ours or an older one, and the gauge is its age as the scrape read it.
    assert.ok(
      age >= before.ours && age >= before.oldest! && age <= after.oldest!,
      `gauge ${age} s; ours ${before.ours} s; oldest ${before.oldest}..${after.oldest} s`,
    );
    assert.ok(sampleValue(during, 'partner_payments_webhook_deliveries', { status: 'retrying' }) >= 1);

    // The endpoint is back: the delivery goes through (time skips its 30 s backoff) and leaves the
    // backlog. The wait after the second attempt is short here: skipping 5 minutes of the shared
    // engine's time walks every earlier test's workflows through their timers.
    h.webhookRetry.backoffMs = [30_000, 500];
    try {
      assert.equal((await delivered(eventId, endpointId)).status, 'succeeded');
    } finally {
      h.webhookRetry.backoffMs = null;
    }
    assert.equal(receiver.requests(hook.path).length, 3);
    assert.equal((await h.db.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: waiting.id } })).status, 'succeeded');
    const done = await scrape();
    const left = await ages();
    assert.ok(sampleValue(done, 'partner_payments_webhook_deliveries', { status: 'succeeded' }) >= 1);
    assert.ok(
      sampleValue(done, 'partner_payments_webhook_oldest_waiting_delivery_age_seconds') <= (left.oldest ?? 0),
      'no older than what still waits',
    );
  });

  test("reports the scanner's lag behind the chain head per network: blocks it has not read count, and once it reads them they no longer do", async () => {
    const h = await getHarness();
    const chain = h.chain.chains.get(h.chainId);
    const labels = { chain_id: String(h.chainId) };
    const gauges = async () => {
      const families = await scrape();
      return {
        lag: sampleValue(families, 'partner_payments_chain_scanner_lag_blocks', labels),
        head: sampleValue(families, 'partner_payments_chain_head_block', labels),
        next: sampleValue(families, 'partner_payments_chain_scanner_next_block', labels),
      };
    };
    const cursor = async () => (await h.db.prisma.chainScanCursor.findUniqueOrThrow({ where: { chainId: h.chainId } })).nextFromBlock;
    const caughtUp = () =>
      eventually(
        async (saw) => {
          const [next, head] = [await cursor(), await chain.getBlockNumber()];
          saw({ next, head });
          return next === head + 1n;
        },
        'the scanner to read up to the head',
        { mine: false },
      );
    await caughtUp();
    // With the worker stopped nothing scans, and nothing the service sends gets mined: the blocks mined
    // now stay unread, whatever pokes are in flight.
    const LAG = 5;
    const [held, lagging] = await withWorkerStopped(async () => {
      const first = await gauges();
      await mine(LAG);
      return [first, await gauges()];
    });
    assert.equal(lagging.next, held.next, 'the scanner did not move');
    assert.equal(lagging.next, Number(await cursor()), 'the cursor the scanner recorded');
    assert.equal(lagging.head, held.head + LAG);
    assert.equal(lagging.lag, held.lag + LAG);
    assert.ok(lagging.lag >= LAG, `lag ${lagging.lag}`);
    assert.equal(lagging.lag, lagging.head + 1 - lagging.next);

    // Poked, it reads them: the cursor passes them, and the lag is only what is above it now.
    await caughtUp();
    const read = await gauges();
    assert.ok(read.next >= lagging.head + 1, `next ${read.next}, head then ${lagging.head}`);
    assert.equal(read.lag, Math.max(0, read.head + 1 - read.next));
  });

  test("exposes the reconcile's open differences by severity", async () => {
    const h = await getHarness();
    const deps = { prisma: h.db.prisma, logger: h.logger };
    const subject = `${h.chainId}:0xmetrics-test-token:0xmetrics-test-${process.pid}`;
    const warnings = (f: Exposition) => sampleValue(f, 'partner_payments_ledger_reconcile_differences', { severity: 'warning' });
    const before = await scrape();
    await raiseAlert(deps, { kind: LEDGER_DIFFERENCE, severity: 'warning', subject, details: { differenceAtomic: '1' } });
    try {
      const during = await scrape();
      assert.equal(warnings(during), warnings(before) + 1);
      assert.equal(
        sampleValue(during, 'partner_payments_operator_alerts_open', { kind: LEDGER_DIFFERENCE, severity: 'warning' }),
        warnings(during),
      );
    } finally {
      await resolveAlerts(deps, LEDGER_DIFFERENCE, [subject]);
    }
    assert.equal(warnings(await scrape()), warnings(before));
  });

  test("includes the Temporal runtime's worker, workflow and activity metrics", async () => {
    const families = await scrape();
    const temporal = families.families.filter((f) => f.name.startsWith('temporal_'));
    assert.ok(temporal.length > 0, 'temporal_* series');
    const names = temporal.map((f) => f.name);
    assert.ok(names.includes('temporal_worker_task_slots_available'), names.join(', '));
    assert.ok(
      names.some((n) => n.startsWith('temporal_workflow_task_')),
      names.join(', '),
    );
    assert.ok(
      names.some((n) => n.startsWith('temporal_activity_')),
      names.join(', '),
    );
  });

  test('a reading that fails leaves its series out and says so in collector_up, the scrape still answers', async () => {
    const h = await getHarness();
    const unreachable = {
      networks: () => h.chain.chains.networks(),
      get: () => ({ getBlockNumber: () => Promise.reject(new Error('RPC down')) }) as never,
    };
    const metrics = createServiceMetrics({ prisma: h.db.prisma, chains: unreachable, temporalMetricsUrl: 'http://127.0.0.1:9/metrics' });
    const { body } = await metrics.render();
    const families = parseExposition(body);
    const up = (collector: string) => sampleValue(families, 'partner_payments_collector_up', { collector });
    assert.equal(up('chain_scanner'), 0);
    assert.equal(up('temporal_runtime'), 0);
    assert.equal(up('payments_status'), 1);
    assert.equal(family(families, 'partner_payments_chain_scanner_lag_blocks').metrics.length, 0);
    assert.ok(samplesOf(families, 'partner_payments_payments').length > 0);
  });
});
