import type { PrismaClient } from '../../db/client';
import { newId } from '../values/ids';

/**
 * Each app's recent API requests, for the dashboard's request log: method, path (never the query
 * string), status, latency, Idempotency-Key and request id. Never a body, a secret or a token. Kept
 * REQUEST_LOG_DAYS; older rows are dropped as the log is read, and by each API process at most once a
 * minute as it writes (an app whose log nobody reads must not keep it for ever).
 */
export const REQUEST_LOG_DAYS = 30;
const DAY_MS = 86_400_000;
const PURGE_EVERY_MS = 60_000;
let lastPurgeMs = 0;

/** Drops every app's rows older than REQUEST_LOG_DAYS. */
export async function purgeRequestLog(prisma: PrismaClient, now = new Date()): Promise<number> {
  return (await prisma.requestLogEntry.deleteMany({ where: { createdAt: { lt: new Date(now.getTime() - REQUEST_LOG_DAYS * DAY_MS) } } }))
    .count;
}

export interface RequestLogView {
  method: string;
  path: string;
  status: number;
  latencyMs: number;
  idempotencyKey: string | null;
  requestId: string;
  createdAt: string;
}

export interface LoggedRequest {
  appId: string;
  method: string;
  path: string;
  status: number;
  latencyMs: number;
  idempotencyKey: string | null;
  requestId: string;
}

const clip = (s: string, max: number) => (s.length > max ? s.slice(0, max) : s);

export async function recordRequest(prisma: PrismaClient, entry: LoggedRequest, now = new Date()): Promise<void> {
  if (now.getTime() - lastPurgeMs >= PURGE_EVERY_MS) {
    lastPurgeMs = now.getTime();
    await purgeRequestLog(prisma, now);
  }
  await prisma.requestLogEntry.create({
    data: {
      id: newId('requestLogEntry'),
      appId: entry.appId,
      method: clip(entry.method, 16),
      path: clip(entry.path.replace(/\0/g, ''), 512),
      status: entry.status,
      latencyMs: Math.max(0, Math.round(entry.latencyMs)),
      idempotencyKey: entry.idempotencyKey === null ? null : clip(entry.idempotencyKey.replace(/\0/g, ''), 255),
      requestId: clip(entry.requestId, 128),
    },
  });
}

export async function recentRequests(prisma: PrismaClient, appId: string, limit = 100, now = new Date()): Promise<RequestLogView[]> {
  await purgeRequestLog(prisma, now);
  const rows = await prisma.requestLogEntry.findMany({ where: { appId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: limit });
  return rows.map((r) => ({
    method: r.method,
    path: r.path,
    status: r.status,
    latencyMs: r.latencyMs,
    idempotencyKey: r.idempotencyKey,
    requestId: r.requestId,
    createdAt: r.createdAt.toISOString(),
  }));
}
