import type { PrismaClient } from '../../db/client';
import { formatAtomic } from '../amounts/amounts';
import { notFound } from '../requests/errors';
import { listOperatorActions, type OperatorActionView } from './operator-actions';
import { openUnrecordedDeposits, unrecordedDeposit, type UnrecordedDeposit } from '../deposits/deposit-unrecorded';

/**
 * What the operator console reads: the Payments, deposits and fund returns an operator may have to act on, and
 * each one's story (its events, transfers, resolutions, returns and alerts) as one timeline. Reads
 * only; the actions are src/domain/operators/operator-actions.ts.
 */
const LIST_LIMIT = 200;

export type HeldKind = 'payment' | 'deposit' | 'fund_return';

export interface HeldItem {
  kind: HeldKind;
  id: string;
  appId: string;
  /** A Payment's operationalState (its status stays as it was), or a deposit's or fund return's status. */
  state: string;
  status: string;
  reasonCode: string | null;
  amount: string;
  chainId: number;
  since: string;
  /** Its workflow's id, when the list knows it without another read (a deposit with no row). */
  workflowId?: string;
}

export interface IncidentItem {
  id: string;
  paymentId: string;
  kind: string;
  status: string;
  amount: string;
  transactionHash: string | null;
  fromAddress: string | null;
  createdAt: string;
}

export interface TimelineEntry {
  at: string;
  what: string;
  detail: string;
  txHash: string | null;
}

export interface HoldDetail {
  item: HeldItem;
  /** The id of the item's workflow (a deposit's is stored with it). */
  workflowId: string | null;
  facts: Array<[string, string]>;
  /** Its story, oldest first; entries with a txHash link to the chain. */
  timeline: TimelineEntry[];
  incidents: IncidentItem[];
  audit: OperatorActionView[];
}

const amountOf = (atomic: { toFixed(): string }, decimals: number, asset: string) => `${formatAtomic(atomic.toFixed(), decimals)} ${asset}`;

type PaymentRow = Awaited<ReturnType<PrismaClient['payment']['findUniqueOrThrow']>>;
type DepositRow = Awaited<ReturnType<PrismaClient['deposit']['findUniqueOrThrow']>>;
type FundReturnRow = Awaited<ReturnType<PrismaClient['fundReturn']['findUniqueOrThrow']>>;

function paymentItem(p: PaymentRow): HeldItem {
  return {
    kind: 'payment',
    id: p.id,
    appId: p.appId,
    state: p.operationalState,
    status: p.status,
    reasonCode: p.operationalReasonCode,
    amount: amountOf(p.amountAtomic, p.decimals, p.assetCode),
    chainId: p.chainId,
    since: (p.operationalUpdatedAt ?? p.updatedAt).toISOString(),
  };
}

function depositItem(d: DepositRow): HeldItem {
  return {
    kind: 'deposit',
    id: d.id,
    appId: d.appId,
    state: d.status,
    status: d.status,
    reasonCode: d.settlementReasonCode,
    amount: amountOf(d.amountAtomic, d.decimals, d.assetSymbol),
    chainId: d.chainId,
    since: d.updatedAt.toISOString(),
  };
}

/** A deposit whose row was refused: held by its alert (deposit-unrecorded.ts), in the deposits' terms. */
function unrecordedItem(u: UnrecordedDeposit, appId: string | undefined): HeldItem {
  const resolution = u.resolution?.action;
  return {
    kind: 'deposit',
    id: u.depositId,
    appId: appId ?? '—',
    state: u.open ? 'requires_intervention' : resolution === 'fail' ? 'failed' : 'recorded',
    status: 'unrecorded',
    reasonCode: 'data_error',
    amount: `${formatAtomic(u.start.amountAtomic, u.start.asset.decimals)} ${u.start.asset.symbol}`,
    chainId: u.start.chainId,
    since: u.since.toISOString(),
    workflowId: u.workflowId,
  };
}

async function appIdsOf(prisma: PrismaClient, depositAddressIds: string[]): Promise<Map<string, string>> {
  const rows = depositAddressIds.length
    ? await prisma.depositAddress.findMany({ where: { id: { in: depositAddressIds } }, select: { id: true, appId: true } })
    : [];
  return new Map(rows.map((r) => [r.id, r.appId]));
}

function fundReturnItem(r: FundReturnRow, p: { decimals: number; assetCode: string }): HeldItem {
  return {
    kind: 'fund_return',
    id: r.id,
    appId: r.appId,
    state: r.status,
    status: r.status,
    reasonCode: r.failureReason,
    amount: amountOf(r.amountAtomic, p.decimals, p.assetCode),
    chainId: r.chainId,
    since: r.updatedAt.toISOString(),
  };
}

/**
 * The console's list: Payments retrying or held (requires_intervention), deposits and fund returns
 * (refunds, incident recoveries) held (their retries show only in their story), and incidents whose
 * funds are not yet returned. Newest first.
 */
export async function listHolds(prisma: PrismaClient): Promise<{ items: HeldItem[]; incidents: IncidentItem[] }> {
  const [payments, deposits, unrecorded, returns, incidents] = await Promise.all([
    prisma.payment.findMany({
      where: { operationalState: { in: ['requires_intervention', 'retrying'] } },
      orderBy: [{ operationalUpdatedAt: 'desc' }, { id: 'asc' }],
      take: LIST_LIMIT,
    }),
    prisma.deposit.findMany({
      where: { status: 'requires_intervention' },
      orderBy: [{ updatedAt: 'desc' }, { id: 'asc' }],
      take: LIST_LIMIT,
    }),
    openUnrecordedDeposits(prisma, LIST_LIMIT),
    prisma.fundReturn.findMany({
      where: { status: 'requires_intervention' },
      include: { payment: { select: { decimals: true, assetCode: true } } },
      orderBy: [{ updatedAt: 'desc' }, { id: 'asc' }],
      take: LIST_LIMIT,
    }),
    prisma.paymentIncident.findMany({
      where: { status: { not: 'confirmed' } },
      include: { payment: { select: { decimals: true, assetCode: true } } },
      orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
      take: LIST_LIMIT,
    }),
  ]);
  const transfers = await transfersById(
    prisma,
    incidents.flatMap((i) => (i.transferId ? [i.transferId] : [])),
  );
  const apps = await appIdsOf(
    prisma,
    unrecorded.map((u) => u.start.depositAddressId),
  );
  const items = [
    ...payments.map(paymentItem),
    ...deposits.map(depositItem),
    ...unrecorded.map((u) => unrecordedItem(u, apps.get(u.start.depositAddressId))),
    ...returns.map((r) => fundReturnItem(r, r.payment)),
  ].sort((a, b) => b.since.localeCompare(a.since));
  return {
    items,
    incidents: incidents.map((i) => incidentItem(i, i.payment, transfers.get(i.transferId ?? ''))),
  };
}

async function transfersById(prisma: PrismaClient, ids: string[]) {
  const rows = ids.length ? await prisma.paymentTransfer.findMany({ where: { id: { in: ids } } }) : [];
  return new Map(rows.map((t) => [t.id, t]));
}

function incidentItem(
  i: { id: string; paymentId: string; kind: string; status: string; amountAtomic: { toFixed(): string }; createdAt: Date },
  p: { decimals: number; assetCode: string },
  t: { txHash: string; fromAddress: string } | undefined,
): IncidentItem {
  return {
    id: i.id,
    paymentId: i.paymentId,
    kind: i.kind,
    status: i.status,
    amount: amountOf(i.amountAtomic, p.decimals, p.assetCode),
    transactionHash: t?.txHash ?? null,
    fromAddress: t?.fromAddress ?? null,
    createdAt: i.createdAt.toISOString(),
  };
}

/** The item's events, each with where its webhook deliveries stand (what the partner was told, and whether it arrived). */
async function eventsOf(prisma: PrismaClient, appId: string, resourceType: string, resourceId: string): Promise<TimelineEntry[]> {
  const events = await prisma.event.findMany({
    where: { appId, resourceType, resourceId },
    orderBy: { sequence: 'asc' },
    include: { webhookDeliveries: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] } },
  });
  return events.map((e) => ({
    at: e.createdAt.toISOString(),
    what: e.name,
    detail: `event ${e.id}; ${deliveriesText(e.webhookDeliveries)}`,
    txHash: null,
  }));
}

function deliveriesText(
  deliveries: Array<{ endpointId: string; status: string; attemptCount: number; lastStatusCode: number | null }>,
): string {
  if (deliveries.length === 0) return 'no webhook delivery';
  const one = (d: (typeof deliveries)[number]) =>
    `${d.endpointId} ${d.status} after ${d.attemptCount} attempt${d.attemptCount === 1 ? '' : 's'}${d.lastStatusCode === null ? '' : ` (HTTP ${d.lastStatusCode})`}`;
  return `webhooks: ${deliveries.map(one).join(', ')}`;
}

/** Open or past alerts that name the item (by id, or an address of its). */
async function alertsOf(prisma: PrismaClient, names: string[]): Promise<TimelineEntry[]> {
  const alerts = await prisma.operatorAlert.findMany({
    where: { OR: names.map((n) => ({ subject: { contains: n } })) },
    orderBy: { createdAt: 'asc' },
  });
  return alerts.map((a) => ({
    at: a.createdAt.toISOString(),
    what: `alert ${a.kind} (${a.severity})`,
    detail: a.resolvedAt ? `resolved ${a.resolvedAt.toISOString()}` : 'open',
    txHash: null,
  }));
}

const byTime = (a: TimelineEntry, b: TimelineEntry) => a.at.localeCompare(b.at);

export async function paymentHold(prisma: PrismaClient, paymentId: string, workflowId: string): Promise<HoldDetail> {
  const p = await prisma.payment.findUnique({
    where: { id: paymentId },
    include: {
      transfers: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
      resolutions: { orderBy: { createdAt: 'asc' } },
      incidents: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
      fundReturns: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
    },
  });
  if (!p) throw notFound('Payment');
  const amount = (atomic: { toFixed(): string }) => amountOf(atomic, p.decimals, p.assetCode);
  const timeline: TimelineEntry[] = [
    ...(await eventsOf(prisma, p.appId, 'payment', p.id)),
    ...p.transfers.map((t) => ({
      at: t.createdAt.toISOString(),
      what: `transfer ${t.status}${t.role ? ` (${t.role})` : ''}`,
      detail: `${amount(t.amountAtomic)} from ${t.fromAddress}`,
      txHash: t.txHash,
    })),
    ...p.resolutions.map((r) => ({
      at: r.createdAt.toISOString(),
      what: `operator ${r.action} applied`,
      detail: `by ${r.actor}${r.reason ? `: ${r.reason}` : ''}`,
      txHash: r.txHash,
    })),
    ...p.fundReturns.map((r) => ({
      at: r.createdAt.toISOString(),
      what: `${r.kind.replace('_', ' ')} ${r.status}`,
      detail: `${amount(r.amountAtomic)} to ${r.toAddress} (${r.id})`,
      txHash: r.transactionHash,
    })),
    ...(await alertsOf(prisma, [p.id, ...(p.escrowAddress ? [p.escrowAddress.toLowerCase()] : [])])),
  ].sort(byTime);
  if (p.settlementTxHash)
    timeline.push({
      at: (p.operationalUpdatedAt ?? p.updatedAt).toISOString(),
      what: 'settlement transaction',
      detail: 'recorded on the Payment',
      txHash: p.settlementTxHash,
    });
  const transfers = await transfersById(
    prisma,
    p.incidents.flatMap((i) => (i.transferId ? [i.transferId] : [])),
  );
  return {
    item: paymentItem(p),
    workflowId,
    facts: [
      ['Status', p.status],
      ['Operational state', p.operationalState],
      ['Reason', p.operationalReasonCode ?? '—'],
      ['Amount', amount(p.amountAtomic)],
      ['Received', amount(p.receivedAtomic)],
      ['Pending', amount(p.pendingAtomic)],
      ['Merchant net', amount(p.merchantNetAtomic)],
      ['App', p.appId],
      ['Chain', String(p.chainId)],
      ['Escrow address', p.escrowAddress ?? '—'],
      ['Created', p.createdAt.toISOString()],
    ],
    timeline,
    incidents: p.incidents.map((i) => incidentItem(i, p, transfers.get(i.transferId ?? ''))),
    audit: await listOperatorActions(prisma, { target: { type: 'payment', id: p.id }, limit: 100 }),
  };
}

export async function depositHold(prisma: PrismaClient, depositId: string): Promise<HoldDetail> {
  const d = await prisma.deposit.findUnique({
    where: { id: depositId },
    include: { resolutions: { orderBy: { createdAt: 'asc' } }, depositAddress: true },
  });
  if (!d) return unrecordedHold(prisma, depositId);
  const amount = (atomic: { toFixed(): string }) => amountOf(atomic, d.decimals, d.assetSymbol);
  const timeline: TimelineEntry[] = [
    {
      at: d.createdAt.toISOString(),
      what: 'transfer received',
      detail: `${amount(d.amountAtomic)} from ${d.fromAddress} in block ${d.blockNumber}`,
      txHash: d.txHash,
    },
    ...(await eventsOf(prisma, d.appId, 'deposit', d.id)),
    ...d.resolutions.map((r) => ({
      at: r.createdAt.toISOString(),
      what: `operator ${r.action} applied`,
      detail: `by ${r.actor}${r.reason ? `: ${r.reason}` : ''}`,
      txHash: r.txHash,
    })),
    ...(await alertsOf(prisma, [d.id, ...(d.depositAddress.address ? [d.depositAddress.address.toLowerCase()] : [])])),
  ].sort(byTime);
  if (d.settlementTxHash)
    timeline.push({
      at: (d.settledAt ?? d.updatedAt).toISOString(),
      what: 'settlement transaction',
      detail: `settlement ${d.settlementStatus}`,
      txHash: d.settlementTxHash,
    });
  return {
    item: depositItem(d),
    workflowId: d.workflowId,
    facts: [
      ['Status', d.status],
      ['Settlement', `${d.settlementStatus} after ${d.settlementAttempts} attempt(s)`],
      ['Reason', d.settlementReasonCode ?? '—'],
      ['Amount', amount(d.amountAtomic)],
      ['Net', amount(d.netAtomic)],
      ['Account', d.accountId],
      ['App', d.appId],
      ['Chain', String(d.chainId)],
      ['Deposit address', d.depositAddress.address ?? '—'],
      ['Created', d.createdAt.toISOString()],
    ],
    timeline,
    incidents: [],
    audit: await listOperatorActions(prisma, { target: { type: 'deposit', id: d.id }, limit: 100 }),
  };
}

/** A deposit with no row (refused for its data): its story is the transfer, its alert and the operators' actions. */
async function unrecordedHold(prisma: PrismaClient, depositId: string): Promise<HoldDetail> {
  const u = await unrecordedDeposit(prisma, depositId);
  if (!u) throw notFound('Deposit');
  const item = unrecordedItem(u, (await appIdsOf(prisma, [u.start.depositAddressId])).get(u.start.depositAddressId));
  const s = u.start;
  return {
    item,
    workflowId: u.workflowId,
    facts: [
      ['Status', `not recorded: the database refused its row (SQLSTATE ${u.sqlState})`],
      ['Hold', u.open ? 'open: retry writes the row again, fail gives the deposit up' : `closed (${u.resolution?.action ?? 'resolved'})`],
      ['Amount', item.amount],
      ['From', s.fromAddress],
      ['Deposit address', `${s.toAddress} (${s.depositAddressId})`],
      ['Transfer', `block ${s.blockNumber}, log ${s.logIndex}`],
      ['App', item.appId],
      ['Chain', String(s.chainId)],
    ],
    timeline: [
      {
        at: item.since,
        what: 'transfer received, its row refused',
        detail: `${item.amount} from ${s.fromAddress} in block ${s.blockNumber}`,
        txHash: s.txHash,
      },
      ...(await alertsOf(prisma, [depositId])),
    ].sort(byTime),
    incidents: [],
    audit: await listOperatorActions(prisma, { target: { type: 'deposit', id: depositId }, limit: 100 }),
  };
}

/** A refund's or incident recovery's story: asked for, its legs sent, the operator's actions, alerts. */
export async function fundReturnHold(prisma: PrismaClient, returnId: string, workflowId: string): Promise<HoldDetail> {
  const r = await prisma.fundReturn.findUnique({ where: { id: returnId }, include: { payment: true } });
  if (!r) throw notFound('Fund return');
  const p = r.payment;
  const amount = (atomic: { toFixed(): string }) => amountOf(atomic, p.decimals, p.assetCode);
  const kind = r.kind === 'refund' ? 'refund' : 'incident recovery';
  const legs = await prisma.settlementLeg.findMany({
    where: { sourceType: r.kind, sourceId: r.id },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  const timeline: TimelineEntry[] = [
    {
      at: r.createdAt.toISOString(),
      what: `${kind} requested`,
      detail: `by ${r.requestedBy} ${r.actor}${r.reason ? `: ${r.reason}` : ''}`,
      txHash: null,
    },
    ...legs.map((l) => ({
      at: l.createdAt.toISOString(),
      what: `leg ${l.leg} ${l.status}`,
      detail: `${amount(l.amountAtomic)} from ${l.fromAddress} to ${l.toAddress}`,
      txHash: l.txHash,
    })),
    ...(await alertsOf(prisma, [r.id])),
  ].sort(byTime);
  if (r.confirmedAt)
    timeline.push({
      at: r.confirmedAt.toISOString(),
      what: `${kind} confirmed`,
      detail: 'posted to the ledger',
      txHash: r.transactionHash,
    });
  return {
    item: fundReturnItem(r, p),
    workflowId,
    facts: [
      ['Kind', kind],
      ['Status', r.status],
      ['Reason', r.failureReason ?? '—'],
      ['Amount', amount(r.amountAtomic)],
      ['Payment', r.paymentId],
      ['Incident', r.incidentId ?? '—'],
      ['From', r.fromAddress],
      ['To', r.toAddress],
      ['Transaction', r.transactionHash ?? '—'],
      ['App', r.appId],
      ['Chain', String(r.chainId)],
      ['Created', r.createdAt.toISOString()],
    ],
    timeline,
    incidents: [],
    audit: await listOperatorActions(prisma, { target: { type: 'fund_return', id: r.id }, limit: 100 }),
  };
}
