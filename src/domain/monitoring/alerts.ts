import { z } from 'zod';
import type { Prisma, PrismaClient } from '../../db/client';
import type { OperatorAlert } from '../../generated/prisma/client';
import type { Logger } from '../../logger';
import { ZAlertId, ZListAlerts, type AlertKind, type AlertSeverity, type OperatorAlertView } from './alerts.schemas';
import { notFound } from '../requests/errors';
import { ZHeldId } from '../operators/operator-actions.schemas';
import { newId } from '../values/ids';
import { afterPosition, pageOf, type CursorCodec } from '../requests/pagination';
import { parseInput } from '../requests/validation';

/**
 * Operator alerts: what an operator must look at (books that disagree with the chain, a Payment whose
 * workflow is gone). Durable rows in operator_alerts, raised by one function, logged at error level
 * when raised, and never raised twice while open: (kind, subject) names the problem, and a partial
 * unique index allows one open alert per name. They are not partner events (no webhook carries them).
 */
export interface AlertDeps {
  prisma: PrismaClient;
  logger: Pick<Logger, 'error' | 'info'>;
}

export interface AlertInput {
  kind: AlertKind;
  severity: AlertSeverity;
  /** What the alert is about, stable across passes (e.g. `31337:<token>:<address>`). */
  subject: string;
  details: Record<string, unknown>;
}

export function toAlertView(row: OperatorAlert): OperatorAlertView {
  return {
    id: row.id,
    kind: row.kind,
    severity: row.severity as AlertSeverity,
    subject: row.subject,
    details: row.details,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    resolvedAt: row.resolvedAt?.toISOString() ?? null,
  };
}

/** An item with a console page: a Payment, a deposit or a fund return (refund or incident recovery). */
export interface AlertItem {
  kind: keyof typeof ZHeldId;
  id: string;
}

/**
 * The item an alert is about, when it names one: its subject `payment:<id>`, `deposit:<id>` or
 * `fund_return:<id>` (the subjects the raising modules build), or a ledger difference in a Payment's
 * escrow book (`escrow:<paymentId>`). Null for alerts about an address, a book or a network.
 */
export function alertItem(alert: Pick<OperatorAlertView, 'subject' | 'details'>): AlertItem | null {
  const named = /^(payment|deposit|fund_return):(.+)$/.exec(alert.subject);
  const escrow = /^escrow:(.+)$/.exec(String((alert.details as { book?: unknown } | null)?.book ?? ''));
  const [kind, id] = named ? [named[1] as AlertItem['kind'], named[2]!] : escrow ? (['payment', escrow[1]!] as const) : [null, null];
  return kind && ZHeldId[kind].safeParse(id).success ? { kind, id } : null;
}

/**
 * Raises an alert, or, when one with the same (kind, subject) is already open, refreshes what it says
 * (details, severity, updatedAt) without raising it again. Answers whether it was raised now.
 */
export async function raiseAlert(deps: AlertDeps, input: AlertInput): Promise<{ alertId: string; raised: boolean }> {
  const id = newId('operatorAlert');
  const details = JSON.stringify(input.details);
  const inserted = await deps.prisma.$queryRaw<Array<{ id: string }>>`
    INSERT INTO operator_alerts (id, kind, severity, subject, details)
    VALUES (${id}, ${input.kind}, ${input.severity}, ${input.subject}, ${details}::jsonb)
    ON CONFLICT (kind, subject) WHERE resolved_at IS NULL DO NOTHING
    RETURNING id`;
  if (inserted.length === 1) {
    deps.logger.error(
      { alertId: id, kind: input.kind, severity: input.severity, subject: input.subject, details: input.details },
      `operator alert: ${input.kind} ${input.subject}`,
    );
    return { alertId: id, raised: true };
  }
  const [open] = await deps.prisma.$queryRaw<Array<{ id: string }>>`
    UPDATE operator_alerts SET details = ${details}::jsonb, severity = ${input.severity}, updated_at = now()
    WHERE kind = ${input.kind} AND subject = ${input.subject} AND resolved_at IS NULL
    RETURNING id`;
  // Resolved between the two statements: the next pass raises it again if it is still there.
  return { alertId: open?.id ?? id, raised: false };
}

/** Resolves the open alerts of `kind` that name one of `subjects`. Answers how many. */
export async function resolveAlerts(deps: AlertDeps, kind: AlertKind, subjects: string[]): Promise<number> {
  if (subjects.length === 0) return 0;
  const rows = await deps.prisma.$queryRaw<Array<{ id: string; subject: string }>>`
    UPDATE operator_alerts SET resolved_at = now(), updated_at = now()
    WHERE kind = ${kind} AND resolved_at IS NULL AND subject = ANY(${subjects}::text[])
    RETURNING id, subject`;
  for (const r of rows) deps.logger.info({ alertId: r.id, kind, subject: r.subject }, `operator alert resolved: ${kind} ${r.subject}`);
  return rows.length;
}

/**
 * Makes the open alerts of one kind match what a complete pass found: each problem in `current` is
 * raised (or refreshed), and every open alert of that kind not in `current` is resolved.
 */
export async function syncAlerts(
  deps: AlertDeps,
  kind: AlertKind,
  current: AlertInput[],
): Promise<{ raised: number; resolved: number; open: number }> {
  let raised = 0;
  for (const alert of current) {
    if (alert.kind !== kind) throw new Error(`syncAlerts(${kind}) was handed a ${alert.kind} alert`);
    if ((await raiseAlert(deps, alert)).raised) raised += 1;
  }
  const keep = new Set(current.map((a) => a.subject));
  const open = await deps.prisma.operatorAlert.findMany({ where: { kind, resolvedAt: null }, select: { subject: true } });
  const resolved = await resolveAlerts(
    deps,
    kind,
    open.map((o) => o.subject).filter((s) => !keep.has(s)),
  );
  return { raised, resolved, open: keep.size };
}

/** Newest first; `open` filters open (true) or resolved (false) alerts. */
export async function listAlerts(
  prisma: PrismaClient,
  cursors: CursorCodec,
  rawQuery: unknown,
): Promise<{ items: OperatorAlertView[]; nextCursor: string | null }> {
  const query = parseInput(ZListAlerts, rawQuery, 'query');
  const scope = `alerts:${query.open ?? ''}:${query.kind ?? ''}`;
  const position = query.cursor ? cursors.decode(scope, query.cursor) : undefined;
  const where: Prisma.OperatorAlertWhereInput = {
    ...(query.open === undefined ? {} : { resolvedAt: query.open ? null : { not: null } }),
    ...(query.kind ? { kind: query.kind } : {}),
    ...afterPosition(position),
  };
  const rows = await prisma.operatorAlert.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: query.limit + 1 });
  const page = pageOf(rows, query.limit, cursors, scope);
  return { items: page.items.map(toAlertView), nextCursor: page.nextCursor };
}

const ZAlertPath = z.object({ alertId: ZAlertId });

export async function getAlert(prisma: PrismaClient, params: unknown): Promise<{ alert: OperatorAlertView }> {
  const { alertId } = parseInput(ZAlertPath, params, 'path');
  const row = await prisma.operatorAlert.findUnique({ where: { id: alertId } });
  if (!row) throw notFound('Alert');
  return { alert: toAlertView(row) };
}
