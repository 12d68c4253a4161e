import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PrismaClient } from '../db/client';
import type { ChainRegistry } from '../chain/registry';
import {
  openAlerts,
  paymentsByOperationalState,
  depositsByStatus,
  paymentsByStatus,
  scannerLag,
  settlementOutcomes,
  webhookDeliveryStats,
  type Count,
} from '../domain/monitoring/operations-metrics';

/**
 * The Prometheus registry behind GET /metrics (prom-client). Two kinds of series:
 * - this process's own, kept in memory: HTTP requests and latency by route template, and Node's
 *   process metrics;
 * - the operations' state, read at scrape time (src/domain/monitoring/operations-metrics.ts) into a registry
 *   made for that scrape, so every API process answers the same and nothing is stale.
 * Plus, when the worker runs in this process, the Temporal runtime's own exposition, appended as is.
 * Each scrape-time reading has a deadline; one that fails or is late leaves its series out and says
 * so in partner_payments_collector_up{collector} = 0, the scrape itself still answers.
 */
export const METRICS_PREFIX = 'partner_payments_';

/** Each reading's deadline: a scrape stays well under Prometheus's default 10 s scrape timeout. */
const DEFAULT_COLLECTOR_TIMEOUT_MS = 2000;

export interface MetricsDeps {
  prisma: PrismaClient;
  chains: Pick<ChainRegistry, 'get' | 'networks'>;
  /** The Temporal runtime's Prometheus endpoint of this process's worker, when it has one. */
  temporalMetricsUrl?: string;
  collectorTimeoutMs?: number;
}

export interface HttpObservation {
  route: string;
  method: string;
  status: number;
  seconds: number;
}

export interface ServiceMetrics {
  observeRequest(o: HttpObservation): void;
  /** The whole exposition: text and its content type. */
  render(): Promise<{ contentType: string; body: string }>;
}

/** A reading: fetches its data, then answers how to register it (so a late reading registers nothing). */
type Collector = (timeoutMs: number) => Promise<(registry: Registry) => void>;

export function createServiceMetrics(deps: MetricsDeps): ServiceMetrics {
  const timeoutMs = deps.collectorTimeoutMs ?? DEFAULT_COLLECTOR_TIMEOUT_MS;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: METRICS_PREFIX });
  const requests = new Counter({
    name: `${METRICS_PREFIX}http_requests_total`,
    help: 'HTTP requests answered, by route template (never the raw path), method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: `${METRICS_PREFIX}http_request_duration_seconds`,
    help: 'HTTP request latency in seconds, by route template, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const collectors = operationsCollectors(deps);

  return {
    observeRequest({ route, method, status, seconds }) {
      const labels = { route, method, status: String(status) };
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
    async render() {
      const scrape = new Registry();
      const up = gauge(
        scrape,
        'collector_up',
        'Whether the last scrape-time reading of each collector succeeded (1) or failed or timed out (0).',
        ['collector'],
      );
      const took = gauge(scrape, 'collector_duration_seconds', 'How long each scrape-time reading took.', ['collector']);
      const temporal = deps.temporalMetricsUrl ? scrapeTemporalRuntime(deps.temporalMetricsUrl, timeoutMs) : Promise.resolve(null);
      await Promise.all(
        Object.entries(collectors).map(async ([name, collect]) => {
          const started = process.hrtime.bigint();
          try {
            const register = await withTimeout(collect(timeoutMs), timeoutMs);
            register(scrape);
            up.set({ collector: name }, 1);
          } catch {
            up.set({ collector: name }, 0);
          }
          took.set({ collector: name }, Number(process.hrtime.bigint() - started) / 1e9);
        }),
      );
      const temporalText = await temporal;
      if (deps.temporalMetricsUrl) up.set({ collector: 'temporal_runtime' }, temporalText === null ? 0 : 1);
      const own = [await registry.metrics(), await scrape.metrics()];
      return { contentType: registry.contentType, body: [...own, temporalText ?? ''].filter(Boolean).map(ensureNewline).join('') };
    },
  };
}

function gauge<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]): Gauge<L> {
  return new Gauge({ name: `${METRICS_PREFIX}${name}`, help, labelNames, registers: [registry] });
}

/** A gauge per count row; an empty table still shows its metric (HELP/TYPE), with no series. */
function countGauge<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  rows: Array<Count<L>>,
): void {
  const g = gauge(registry, name, help, labelNames);
  for (const r of rows) g.set(r.labels as Partial<Record<L, string>>, r.count);
}

/** The scrape-time readings, by the name collector_up reports them under. */
function operationsCollectors(deps: MetricsDeps): Record<string, Collector> {
  const { prisma } = deps;
  return {
    payments_status: paymentsStatusCollector(prisma),
    payments_operational_state: paymentsOperationalStateCollector(prisma),
    deposits_status: depositsStatusCollector(prisma),
    settlements: settlementsCollector(prisma),
    webhook_deliveries: webhookDeliveriesCollector(prisma),
    chain_scanner: chainScannerCollector(deps),
    alerts: alertsCollector(prisma),
  };
}

function paymentsStatusCollector(prisma: PrismaClient): Collector {
  return async (ms) => {
    const rows = await paymentsByStatus(prisma, ms);
    return (r) => countGauge(r, 'payments', 'Payments by status.', ['status'], rows);
  };
}

function paymentsOperationalStateCollector(prisma: PrismaClient): Collector {
  return async (ms) => {
    const rows = await paymentsByOperationalState(prisma, ms);
    return (r) =>
      countGauge(
        r,
        'payments_operational_state',
        'Payments by operational state (requires_intervention: a hold waiting for an operator).',
        ['operational_state'],
        rows,
      );
  };
}

function depositsStatusCollector(prisma: PrismaClient): Collector {
  return async (ms) => {
    const rows = await depositsByStatus(prisma, ms);
    return (r) =>
      countGauge(r, 'deposits', 'Deposits by status (requires_intervention: a hold waiting for an operator).', ['status'], rows);
  };
}

/** Outgoing settlement transfers and returns of funds, read together. */
function settlementsCollector(prisma: PrismaClient): Collector {
  return async (ms) => {
    const o = await settlementOutcomes(prisma, ms);
    return (r) => {
      countGauge(
        r,
        'settlement_legs',
        'Outgoing settlement transfers by source (payment, deposit, ...) and outcome (broadcast, confirmed, reverted, replaced, superseded).',
        ['source_type', 'status'],
        o.legs,
      );
      countGauge(
        r,
        'fund_returns',
        'Returns of funds (refunds, incident recoveries) by kind and status.',
        ['kind', 'status'],
        o.fundReturns,
      );
    };
  };
}

function webhookDeliveriesCollector(prisma: PrismaClient): Collector {
  return async (ms) => {
    const s = await webhookDeliveryStats(prisma, ms);
    return (r) => {
      countGauge(
        r,
        'webhook_deliveries',
        'Webhook deliveries by status (pending, retrying, succeeded, abandoned).',
        ['status'],
        s.byStatus,
      );
      gauge(
        r,
        'webhook_oldest_waiting_delivery_age_seconds',
        'Age of the oldest webhook delivery still pending or retrying; 0 when none waits.',
        [],
      ).set(s.oldestWaitingAgeSeconds);
    };
  };
}

function chainScannerCollector(deps: MetricsDeps): Collector {
  return async (ms) => {
    const lags = await scannerLag(deps, ms);
    const failed = lags.filter((l) => l.status === 'rejected');
    return (r) => {
      const head = gauge(r, 'chain_head_block', "The chain head each network's RPC reports.", ['chain_id']);
      const next = gauge(r, 'chain_scanner_next_block', "The next block each network's scanner reads.", ['chain_id']);
      const lag = gauge(r, 'chain_scanner_lag_blocks', 'Blocks at or below the chain head the scanner has not read yet.', ['chain_id']);
      for (const l of lags) {
        if (l.status !== 'fulfilled') continue;
        const labels = { chain_id: String(l.chainId) };
        head.set(labels, Number(l.value.head));
        if (l.value.nextFromBlock !== null) next.set(labels, Number(l.value.nextFromBlock));
        if (l.value.lagBlocks !== null) lag.set(labels, Number(l.value.lagBlocks));
      }
      // Reported after the others are registered: a network's RPC down fails this reading.
      if (failed.length > 0) throw new Error(`chain head unreadable on ${failed.map((l) => l.chainId).join(', ')}`);
    };
  };
}

/** Open operator alerts, and the ledger differences among them. */
function alertsCollector(prisma: PrismaClient): Collector {
  return async (ms) => {
    const a = await openAlerts(prisma, ms);
    return (r) => {
      countGauge(r, 'operator_alerts_open', 'Open operator alerts by kind and severity.', ['kind', 'severity'], a.byKind);
      const diffs = gauge(
        r,
        'ledger_reconcile_differences',
        'Differences between the books and the chain found by the last reconcile (its open ledger_difference alerts), by severity.',
        ['severity'],
      );
      for (const severity of ['critical', 'warning'])
        diffs.set({ severity }, a.reconcileDifferences.find((d) => d.labels.severity === severity)?.count ?? 0);
    };
  };
}

/** The Temporal runtime's own exposition (its worker, workflow and activity metrics); null when unreachable. */
async function scrapeTemporalRuntime(url: string, timeoutMs: number): Promise<string | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return null;
    return await res.text();
  } catch {
    return null;
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const ensureNewline = (text: string) => (text.endsWith('\n') ? text : `${text}\n`);
