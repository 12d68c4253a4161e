import type { Prisma, PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import { LEDGER_DIFFERENCE } from '../ledger/reconcile';

/**
 * What operators watch (GET /metrics), read at scrape time from PostgreSQL, so every API process
 * answers the same whichever process did the work. One grouped query per reading, each in a read-only
 * transaction with its own statement_timeout: a slow table costs one reading, never the scrape.
 */
export interface Count<L extends string> {
  labels: Record<L, string>;
  count: number;
}

type Tx = Prisma.TransactionClient;

/** Runs fn in a read-only transaction whose statements PostgreSQL cancels after timeoutMs. */
async function bounded<T>(prisma: PrismaClient, timeoutMs: number, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const ms = Math.max(1, Math.floor(timeoutMs));
  return prisma.$transaction(
    async (tx) => {
      // SET LOCAL takes no bind parameters; ms is an integer.
      await tx.$executeRawUnsafe('SET TRANSACTION READ ONLY');
      await tx.$executeRawUnsafe(`SET LOCAL statement_timeout = ${ms}`);
      return fn(tx);
    },
    { timeout: ms + 1000 },
  );
}

const counts = <L extends string>(rows: Array<Record<L, string | null> & { count: number }>, keys: L[]): Array<Count<L>> =>
  rows.map((r) => ({ labels: Object.fromEntries(keys.map((k) => [k, r[k] ?? ''])) as Record<L, string>, count: Number(r.count) }));

/** Payments by status (pending, ..., succeeded, failed, ...). */
export async function paymentsByStatus(prisma: PrismaClient, timeoutMs: number): Promise<Array<Count<'status'>>> {
  const rows = await bounded(
    prisma,
    timeoutMs,
    (tx) => tx.$queryRaw<Array<{ status: string; count: number }>>`
    SELECT status, count(*)::int AS count FROM payments GROUP BY status`,
  );
  return counts(rows, ['status']);
}

/** Payments by operational state (normal, retrying, requires_intervention: a hold waiting for an operator). */
export async function paymentsByOperationalState(prisma: PrismaClient, timeoutMs: number): Promise<Array<Count<'operational_state'>>> {
  const rows = await bounded(
    prisma,
    timeoutMs,
    (tx) => tx.$queryRaw<Array<{ operational_state: string; count: number }>>`
    SELECT operational_state, count(*)::int AS count FROM payments GROUP BY operational_state`,
  );
  return counts(rows, ['operational_state']);
}

/** Deposits by status (requires_intervention: a deposit's settlement held for an operator). */
export async function depositsByStatus(prisma: PrismaClient, timeoutMs: number): Promise<Array<Count<'status'>>> {
  const rows = await bounded(
    prisma,
    timeoutMs,
    (tx) => tx.$queryRaw<Array<{ status: string; count: number }>>`
    SELECT status, count(*)::int AS count FROM deposits GROUP BY status`,
  );
  return counts(rows, ['status']);
}

export interface SettlementOutcomes {
  /** Every outgoing transfer of a settlement (settlement_legs): broadcast, confirmed, reverted, replaced, superseded. */
  legs: Array<Count<'source_type' | 'status'>>;
  /** Returns of funds (refunds, incident recoveries): pending ... confirmed, failed, requires_intervention. */
  fundReturns: Array<Count<'kind' | 'status'>>;
}

/** Settlement outcomes as the settlement records hold them: legs by source and status, fund returns by kind and status. */
export async function settlementOutcomes(prisma: PrismaClient, timeoutMs: number): Promise<SettlementOutcomes> {
  return bounded(prisma, timeoutMs, async (tx) => {
    const legs = await tx.$queryRaw<Array<{ source_type: string; status: string; count: number }>>`
      SELECT source_type, status, count(*)::int AS count FROM settlement_legs GROUP BY source_type, status`;
    const fundReturns = await tx.$queryRaw<Array<{ kind: string; status: string; count: number }>>`
      SELECT kind, status, count(*)::int AS count FROM fund_returns GROUP BY kind, status`;
    return { legs: counts(legs, ['source_type', 'status']), fundReturns: counts(fundReturns, ['kind', 'status']) };
  });
}

export interface WebhookDeliveryStats {
  /** Deliveries by status: pending, retrying, succeeded, abandoned. */
  byStatus: Array<Count<'status'>>;
  /** Age of the oldest delivery still pending or retrying (the backlog's lag); 0 when none waits. */
  oldestWaitingAgeSeconds: number;
}

/** Webhook delivery outcomes and the backlog's lag. */
export async function webhookDeliveryStats(prisma: PrismaClient, timeoutMs: number): Promise<WebhookDeliveryStats> {
  return bounded(prisma, timeoutMs, async (tx) => {
    const byStatus = await tx.$queryRaw<Array<{ status: string; count: number }>>`
      SELECT status, count(*)::int AS count FROM webhook_deliveries GROUP BY status`;
    // The delivery's current round started when it was (re)queued: an operator redelivery is not old.
    const [oldest] = await tx.$queryRaw<Array<{ age: number | null }>>`
      SELECT extract(epoch FROM now() - min(coalesce(queued_at, created_at)))::float8 AS age
      FROM webhook_deliveries WHERE status IN ('pending', 'retrying')`;
    return { byStatus: counts(byStatus, ['status']), oldestWaitingAgeSeconds: Math.max(0, oldest?.age ?? 0) };
  });
}

export interface ScannerLag {
  chainId: number;
  head: bigint;
  /** The next block the scanner reads; null before its first scan. */
  nextFromBlock: bigint | null;
  /** Blocks at or below the head the scanner has not read yet; null before its first scan. */
  lagBlocks: bigint | null;
}

/** The chain scanners' cursors (one row per network). */
export async function scanCursors(prisma: PrismaClient, timeoutMs: number): Promise<Map<number, bigint>> {
  const rows = await bounded(
    prisma,
    timeoutMs,
    (tx) => tx.$queryRaw<Array<{ chain_id: number; next_from_block: bigint }>>`
    SELECT chain_id, next_from_block FROM chain_scan_cursors`,
  );
  return new Map(rows.map((r) => [Number(r.chain_id), BigInt(r.next_from_block)]));
}

/**
 * Each configured network's scanner lag: the head its RPC reports against the scanner's cursor. A
 * network whose RPC fails is reported as failed (the others still count).
 */
export async function scannerLag(
  deps: { prisma: PrismaClient; chains: Pick<ChainRegistry, 'get' | 'networks'> },
  timeoutMs: number,
): Promise<Array<PromiseSettledResult<ScannerLag> & { chainId: number }>> {
  const cursors = await scanCursors(deps.prisma, timeoutMs);
  const networks = deps.chains.networks();
  const results = await Promise.allSettled(
    networks.map(async (n): Promise<ScannerLag> => {
      const head = await deps.chains.get(n.chainId).getBlockNumber();
      const next = cursors.get(n.chainId) ?? null;
      const lag = next === null ? null : head + 1n - next;
      return { chainId: n.chainId, head, nextFromBlock: next, lagBlocks: lag === null ? null : lag < 0n ? 0n : lag };
    }),
  );
  return results.map((r, i) => ({ ...r, chainId: networks[i]!.chainId }));
}

export interface OpenAlerts {
  /** Open operator alerts by kind and severity. */
  byKind: Array<Count<'kind' | 'severity'>>;
  /**
   * The last reconcile's differences (open ledger_difference alerts, by severity): the scheduled
   * reconciliation records them, and resolves them when a later pass finds the books and chain agree.
   */
  reconcileDifferences: Array<Count<'severity'>>;
}

/** Open operator alerts, the reconcile's differences among them. */
export async function openAlerts(prisma: PrismaClient, timeoutMs: number): Promise<OpenAlerts> {
  const rows = await bounded(
    prisma,
    timeoutMs,
    (tx) => tx.$queryRaw<Array<{ kind: string; severity: string; count: number }>>`
    SELECT kind, severity, count(*)::int AS count FROM operator_alerts WHERE resolved_at IS NULL GROUP BY kind, severity`,
  );
  const byKind = counts(rows, ['kind', 'severity']);
  return {
    byKind,
    reconcileDifferences: byKind
      .filter((c) => c.labels.kind === LEDGER_DIFFERENCE)
      .map((c) => ({ labels: { severity: c.labels.severity }, count: c.count })),
  };
}
