import { finalityOfOne, type FinalityDeps } from '../chain/finality';
import type { PrismaClient } from '../../db/client';
import type { EnvironmentName } from '../../config/environments';
import type { AuthenticatedApp, Scope } from '../apps/apps';
import { formatAtomic } from '../amounts/amounts';
import { notFound } from '../requests/errors';
import { toDepositView } from '../deposits/deposit-view';
import { readableResourceTypes } from '../event-log/event-log';
import type { TFinality } from '../chain/finality.schemas';
import { isFinalStatus } from '../payments/pure/payment-machine';
import { TERMINAL as DEPOSIT_TERMINAL, type DepositStatus } from '../deposits/pure/deposit-machine';

/** What the dashboard reads of an app, with the app's own scopes: it shows what the app's API shows. */
export async function dashboardApp(prisma: PrismaClient, appId: string): Promise<AuthenticatedApp & { revokedAt: string | null }> {
  const app = await prisma.app.findUnique({ where: { id: appId } });
  if (!app) throw notFound('App');
  return {
    id: app.id,
    name: app.name,
    environment: app.environment as EnvironmentName,
    scopes: app.scopes as Scope[],
    apiVersion: app.apiVersion,
    revokedAt: app.revokedAt?.toISOString() ?? null,
  };
}

/** The app's latest deposits, every account's, newest first. */
export async function recentDeposits(prisma: PrismaClient, app: AuthenticatedApp, limit = 50) {
  const rows = await prisma.deposit.findMany({ where: { appId: app.id }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: limit });
  return rows.map((d) => ({
    id: d.id,
    status: d.status,
    amount: `${formatAtomic(d.amountAtomic.toFixed(0), d.decimals)} ${d.assetSymbol}`,
    createdAt: d.createdAt.toISOString(),
  }));
}

export async function depositOf(deps: FinalityDeps, app: AuthenticatedApp, depositId: string) {
  const row = depositId.length <= 64 ? await deps.prisma.deposit.findFirst({ where: { id: depositId, appId: app.id } }) : null;
  if (!row) throw notFound('Deposit');
  return toDepositView(row, await finalityOfOne(deps, { kind: 'deposit', id: row.id }, new Date()));
}

/**
 * What a resource page's live bars read again every few seconds: the resource's finality, and whether
 * it is at rest (final: no settlement is still to come). Two small reads: its status, then finalityOfOne.
 */
export async function resourceFinalityOf(
  deps: FinalityDeps,
  app: AuthenticatedApp,
  resource: { kind: 'payment' | 'deposit'; id: string },
): Promise<{ finality: TFinality; atRest: boolean }> {
  const where = { id: resource.id, appId: app.id };
  const select = { id: true, status: true };
  const row =
    resource.id.length > 64
      ? null
      : resource.kind === 'payment'
        ? await deps.prisma.payment.findFirst({ where, select })
        : await deps.prisma.deposit.findFirst({ where, select });
  if (!row) throw notFound(resource.kind === 'payment' ? 'Payment' : 'Deposit');
  return {
    finality: await finalityOfOne(deps, { kind: resource.kind, id: row.id }, new Date()),
    atRest: atRest(resource.kind, row.status),
  };
}

/** A Payment or deposit at rest: final, so no settlement leg of it is still to come. */
export function atRest(kind: 'payment' | 'deposit', status: string): boolean {
  return kind === 'payment' ? isFinalStatus(status) : DEPOSIT_TERMINAL.has(status as DepositStatus);
}

export interface TimelineStep {
  eventId: string;
  name: string;
  resourceSequence: string;
  createdAt: string;
}

/** A resource's events in order: its timeline as the partner's webhooks told it. */
export async function timelineOf(prisma: PrismaClient, app: AuthenticatedApp, resourceId: string): Promise<TimelineStep[]> {
  const rows = await prisma.event.findMany({
    where: { appId: app.id, resourceId, resourceType: { in: readableResourceTypes(app.scopes) } },
    orderBy: [{ resourceSequence: 'asc' }, { createdAt: 'asc' }, { id: 'asc' }],
    take: 500,
  });
  return rows.map((e) => ({
    eventId: e.id,
    name: e.name,
    resourceSequence: e.resourceSequence.toString(),
    createdAt: e.createdAt.toISOString(),
  }));
}
