import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Address, Hash } from 'viem';
import { checkBooks } from '../verify';
import type { WebhookReceiver } from '../webhook-receiver';
import type { Recorder } from './partner';
import { plantFault, type Observations, type Plant } from './plant';
import type { RehearsalStack } from './stack';
import {
  eventVerdicts,
  depositVerdicts,
  holdVerdicts,
  type ObservedDeposit,
  type PlannedDeposit,
  releasedHoldVerdicts,
  type ReleasedHold,
  outageVerdicts,
  paymentVerdicts,
  payoutVerdicts,
  unavailableVerdicts,
  type Hold,
  type ObservedPayment,
  type Outage,
  type PlannedPayment,
  type ProviderPayout,
  type Window,
} from './verdicts';

/**
 * The end of a rehearsal: everything at rest, then what must hold after its faults, judged by the
 * pure verdicts (simulate/rehearsal/verdicts.ts) over what this file observes: every planned Payment
 * ended as planned, to the unit on chain; nothing held for an operator unplanned; every committed
 * event delivered and verified at its endpoint, a duplicate only where a fault interrupted a delivery;
 * every bank payout one payout in the provider's own records; a 503 only inside a fault's window; each
 * part back, and a Payment succeeded, within the bounds; the books equal the chains; every part runs.
 */

/** What the rehearsal kills (and the chain's fee market it spikes), each at least once. */
export const PARTS = [
  'api',
  'worker',
  'temporal-frontend',
  'temporal-history',
  'temporal-matching',
  'temporal-worker',
  'postgres',
  'chain-fee-spike',
] as const;

const TERMINAL = {
  payment: ['succeeded', 'failed', 'cancelled', 'expired'],
  deposit: ['settled', 'reversed', 'failed', 'ignored'],
  return: ['confirmed', 'failed'],
  vaultFunding: ['confirmed', 'failed'],
};
const HELD = 'requires_intervention';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What is neither terminal nor held with a reason; empty once everything rests. */
async function notAtRest(stack: RehearsalStack): Promise<string[]> {
  const prisma = stack.db.prisma;
  const waiting: string[] = [];
  for (const p of await prisma.payment.findMany({
    where: { NOT: { status: { in: TERMINAL.payment } } },
    select: { id: true, status: true, operationalState: true, operationalReasonCode: true },
  })) {
    if (p.operationalState !== HELD) waiting.push(`Payment ${p.id} is ${p.status}`);
    else if (!p.operationalReasonCode) waiting.push(`Payment ${p.id} is held without a reason`);
  }
  for (const d of await prisma.deposit.findMany({
    where: { NOT: { status: { in: TERMINAL.deposit } } },
    select: { id: true, status: true, settlementReasonCode: true },
  })) {
    if (d.status !== HELD) waiting.push(`deposit ${d.id} is ${d.status}`);
    else if (!d.settlementReasonCode) waiting.push(`deposit ${d.id} is held without a reason`);
  }
  for (const r of await prisma.fundReturn.findMany({
    where: { NOT: { status: { in: TERMINAL.return } } },
    select: { id: true, kind: true, status: true, failureReason: true },
  })) {
    if (r.status !== HELD) waiting.push(`${r.kind} ${r.id} is ${r.status}`);
    else if (!r.failureReason) waiting.push(`${r.kind} ${r.id} is held without a reason`);
  }
  for (const v of await prisma.vaultFundingOperation.findMany({
    where: { NOT: { status: { in: TERMINAL.vaultFunding } } },
    select: { id: true, status: true },
  })) {
    waiting.push(`vault payment ${v.id} is ${v.status}`);
  }
  return waiting;
}

/** Polls (scanners poked) until everything rests; answers what still does not after `deadlineMs`. */
export async function waitForRest(stack: RehearsalStack, deadlineMs: number, log: (line: string) => void): Promise<string[]> {
  const started = Date.now();
  let reported = 0;
  for (;;) {
    for (const c of stack.chains) await stack.engine.pokeChainScanner(c.chainId).catch(() => undefined);
    const waiting = await notAtRest(stack);
    if (waiting.length === 0) {
      log(`at rest after ${Math.round((Date.now() - started) / 1000)} s`);
      return [];
    }
    if (Date.now() - started > deadlineMs) return waiting;
    if (Date.now() - reported > 15_000) {
      reported = Date.now();
      log(`waiting for ${waiting.length} thing(s) to come to rest, e.g. ${waiting[0]}`);
    }
    await sleep(2000);
  }
}

/** Waits (bounded) until every committed event of each app reached its receiver at least once. */
async function waitForDeliveries(
  stack: RehearsalStack,
  apps: Record<string, string>,
  receivers: Record<string, WebhookReceiver>,
  deadlineMs: number,
): Promise<Record<string, Array<{ id: string; name: string }>>> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const committed: Record<string, Array<{ id: string; name: string }>> = {};
    let missing = 0;
    for (const [environment, appId] of Object.entries(apps)) {
      committed[environment] = await stack.db.prisma.event.findMany({ where: { appId }, select: { id: true, name: true } });
      missing += committed[environment].filter((e) => !receivers[environment]!.delivered.has(e.id)).length;
    }
    if (missing === 0 || Date.now() > deadline) return committed;
    await sleep(2000);
  }
}

/** Blocks a chain's scanner may be behind its head once everything rests (a block a second). */
const SCANNER_LAG_BLOCKS = 30n;

/** Each chain's scanner reads near its head: one that stopped leaves deposits uncredited. */
async function scannersCurrent(stack: RehearsalStack): Promise<string[]> {
  const problems: string[] = [];
  const cursors = new Map((await stack.db.prisma.chainScanCursor.findMany()).map((c) => [c.chainId, c]));
  for (const c of stack.chains) {
    const head = await stack.chain.chains.get(c.chainId).getBlockNumber();
    const cursor = cursors.get(c.chainId);
    if (!cursor) problems.push(`chain ${c.chainId}: its scanner never recorded a scan`);
    else if (head - cursor.nextFromBlock > SCANNER_LAG_BLOCKS) {
      problems.push(
        `chain ${c.chainId}: its scanner is ${head - cursor.nextFromBlock} blocks behind the head, last scan ${cursor.scannedAt.toISOString()}`,
      );
    }
  }
  return problems;
}

/** Each API answers /healthz, each worker and cluster role still runs. */
async function partsRunning(stack: RehearsalStack): Promise<string[]> {
  const problems: string[] = [];
  for (const [i, url] of stack.apiUrls.entries()) {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) }).catch((err: unknown) => err as Error);
    if (res instanceof Error || res.status !== 200)
      problems.push(`${stack.apis[i]!.name} does not answer /healthz: ${res instanceof Error ? res.message : res.status}`);
  }
  for (const w of stack.workers) if (!w.running) problems.push(`${w.name} is not running (see ${w.logFile})`);
  for (const role of stack.cluster.members) {
    const pid = stack.cluster.pid(role);
    let alive = pid !== undefined;
    try {
      if (pid !== undefined) process.kill(pid, 0);
    } catch {
      alive = false;
    }
    if (!alive) problems.push(`the Temporal ${role} service is not running`);
  }
  return problems;
}

export interface CheckInput {
  stack: RehearsalStack;
  apps: Record<string, string>;
  receivers: Record<string, WebhookReceiver>;
  recorder: Recorder;
  outages: Outage[];
  planned: PlannedPayment[];
  plannedDeposits: PlannedDeposit[];
  /** The holds the treasury drill planned, as the operator released them. */
  releasedHolds: ReleasedHold[];
  restless: string[];
  flowErrors: string[];
  restMs: number;
  plants: Plant[];
}

/** Each outage's window (with when the service caught up), and each unplanned exit's until its process was back. */
function windowsOf(o: CheckInput): Window[] {
  return [
    ...o.outages.map((x) => ({ part: x.part, at: x.at, backAt: x.backAt ?? Date.now(), recoveredAt: x.paymentAt })),
    ...o.stack.crashes.map((c) => ({ part: c.name, at: c.at, backAt: c.backAt ?? Date.now() })),
  ];
}

export async function checkRehearsal(o: CheckInput) {
  const failures: string[] = [...o.flowErrors.map((e) => `partner flow failed: ${e}`)];
  failures.push(...o.restless.slice(0, 50).map((w) => `not at rest: ${w}`));
  if (o.restless.length > 50) failures.push(`... and ${o.restless.length - 50} more not at rest`);
  failures.push(...outageVerdicts(o.outages, PARTS));

  const committed = await waitForDeliveries(o.stack, o.apps, o.receivers, o.restMs);
  let observed: Observations = {
    planned: o.planned,
    payments: await observePayments(o.stack, o.planned),
    events: Object.fromEntries(
      Object.entries(o.receivers).map(([env, r]) => [env, { committed: committed[env] ?? [], receipts: r.receipts }]),
    ),
    servicePayouts: await servicePayouts(o.stack),
    providerPayouts: providerPayouts(o.stack.providerDir),
  };
  for (const plant of o.plants) observed = plantFault(plant, observed);
  const windows = windowsOf(o);
  failures.push(...paymentVerdicts(observed.planned, observed.payments));
  failures.push(...depositVerdicts(o.plannedDeposits, await observeDeposits(o.stack, o.plannedDeposits)).slice(0, 50));
  let duplicates = 0;
  for (const [endpoint, e] of Object.entries(observed.events)) {
    const v = eventVerdicts(endpoint, e, windows);
    failures.push(...v.failures.slice(0, 50));
    duplicates += v.duplicates;
  }
  for (const [environment, r] of Object.entries(o.receivers))
    for (const refused of r.refused) failures.push(`a ${environment} webhook request failed verification: ${refused}`);
  failures.push(...payoutVerdicts(observed.servicePayouts, observed.providerPayouts));
  const holds = await heldItems(o.stack);
  failures.push(...holdVerdicts(holds));
  failures.push(...releasedHoldVerdicts(o.releasedHolds, await depositStatuses(o.stack, o.releasedHolds)));

  for (const b of o.recorder.broken)
    failures.push(
      `${b.op} answered ${b.status}${b.retryAfter ? ` (Retry-After ${b.retryAfter})` : ' without Retry-After'} at ${new Date(b.at).toISOString()}: ${b.text}`,
    );
  failures.push(...unavailableVerdicts(o.recorder.unavailable, windows));
  for (const c of o.stack.crashes)
    if (c.backAt === undefined) failures.push(`${c.name} exited by itself (${c.exit}: ${c.cause}) and did not come back`);

  const books = await checkBooks(o.stack);
  failures.push(...books.problems);
  failures.push(...(await partsRunning(o.stack)));
  failures.push(...(await scannersCurrent(o.stack)));
  const figures = await figuresOf(o, { committed, duplicates, holds, books, observed });
  return { failures, figures };
}

async function figuresOf(
  o: CheckInput,
  x: {
    committed: Record<string, unknown[]>;
    duplicates: number;
    holds: Hold[];
    books: Awaited<ReturnType<typeof checkBooks>>;
    observed: Observations;
  },
) {
  const prisma = o.stack.db.prisma;
  const countBy = async (rows: Promise<Array<{ status: string; _count: { _all: number } }>>) =>
    Object.fromEntries((await rows).map((r) => [r.status, r._count._all]));
  const committed = Object.values(x.committed).reduce((n, list) => n + list.length, 0);
  const plans: Record<string, number> = {};
  for (const p of o.planned) plans[p.plan] = (plans[p.plan] ?? 0) + 1;
  return {
    payments: await countBy(prisma.payment.groupBy({ by: ['status'], _count: { _all: true } }) as never),
    planned: plans,
    deposits: await countBy(prisma.deposit.groupBy({ by: ['status'], _count: { _all: true } }) as never),
    returns: await countBy(prisma.fundReturn.groupBy({ by: ['status'], _count: { _all: true } }) as never),
    vaultPayments: await countBy(prisma.vaultFundingOperation.groupBy({ by: ['status'], _count: { _all: true } }) as never),
    payouts: { service: x.observed.servicePayouts.length, provider: x.observed.providerPayouts.length },
    unexpectedExits: o.stack.crashes.map((c) => ({ name: c.name, at: new Date(c.at).toISOString(), exit: c.exit, cause: c.cause })),
    unplannedHolds: x.holds.map((h) => `${h.what}: ${h.reason ?? 'no reason'}`),
    releasedHolds: o.releasedHolds.filter((r) => !r.error).map((r) => `${r.kind} ${r.id}: ${r.reason ?? 'no reason'}`),
    events: {
      committed,
      delivered: Object.values(o.receivers).reduce((n, r) => n + r.delivered.size, 0),
      duplicates: x.duplicates,
      failedOnPurpose: Object.values(o.receivers).reduce((n, r) => n + r.failedOnPurpose, 0),
    },
    ledger: { postings: x.books.ledger.postings, problems: x.books.ledger.problems.length },
    reconcile: { checked: x.books.reconcile.checked, differences: x.books.reconcile.differences.length },
  };
}

/** Each planned Payment as the service recorded it, its settlement and recoveries read back from the chain. */
async function observePayments(stack: RehearsalStack, planned: PlannedPayment[]): Promise<Map<string, ObservedPayment>> {
  const prisma = stack.db.prisma;
  const ids = planned.map((p) => p.id);
  const rows = await prisma.payment.findMany({ where: { id: { in: ids } }, include: { incidents: true, fundReturns: true } });
  const netLegs = await prisma.settlementLeg.findMany({ where: { sourceType: 'payment', sourceId: { in: ids }, leg: 'net' } });
  const legOf = new Map(netLegs.map((l) => [l.sourceId, l]));
  const out = new Map<string, ObservedPayment>();
  for (const r of rows) {
    const leg = legOf.get(r.id);
    const chain = stack.chain.chains.get(r.chainId);
    const moved = async (tx: string | null | undefined, to: string) =>
      tx ? sumTo(await chain.getTransactionTransfers(tx as Hash), r.tokenAddress, to) : null;
    const recoveries = r.fundReturns.filter((f) => f.kind === 'incident_recovery');
    out.set(r.id, {
      id: r.id,
      status: r.status,
      held: r.operationalState === HELD,
      reason: r.operationalReasonCode,
      merchantNetAtomic: BigInt(r.merchantNetAtomic.toFixed()),
      settledOnChainAtomic: leg?.txHash && leg.status === 'confirmed' ? await moved(leg.txHash, leg.toAddress) : null,
      incidents: r.incidents.map((i) => ({ kind: i.kind, amountAtomic: BigInt(i.amountAtomic.toFixed()) })),
      recoveries: await Promise.all(
        recoveries.map(async (f) => ({
          status: f.status,
          amountAtomic: BigInt(f.amountAtomic.toFixed()),
          onChainAtomic: await moved(f.transactionHash, f.toAddress),
        })),
      ),
    });
  }
  return out;
}

/** The deposits each planned transfer became, by its transaction, their net legs read back from the chain. */
async function observeDeposits(stack: RehearsalStack, planned: PlannedDeposit[]): Promise<Map<string, ObservedDeposit[]>> {
  const prisma = stack.db.prisma;
  const hashes = [...new Set(planned.map((p) => p.txHash.toLowerCase()))];
  const rows = await prisma.deposit.findMany({ where: { txHash: { in: hashes, mode: 'insensitive' } } });
  const netLegs = await prisma.settlementLeg.findMany({
    where: { sourceType: 'deposit', sourceId: { in: rows.map((r) => r.id) }, leg: 'net', status: 'confirmed' },
  });
  const legOf = new Map(netLegs.map((l) => [l.sourceId, l]));
  const out = new Map<string, ObservedDeposit[]>();
  for (const r of rows) {
    const leg = legOf.get(r.id);
    const moved = leg?.txHash
      ? sumTo(await stack.chain.chains.get(r.chainId).getTransactionTransfers(leg.txHash as Hash), r.tokenAddress, leg.toAddress)
      : null;
    const key = r.txHash.toLowerCase();
    out.set(key, [
      ...(out.get(key) ?? []),
      {
        id: r.id,
        status: r.status,
        amountAtomic: BigInt(r.amountAtomic.toFixed()),
        netAtomic: BigInt(r.netAtomic.toFixed()),
        settledOnChainAtomic: moved,
      },
    ]);
  }
  return out;
}

function sumTo(transfers: Array<{ token: Address; to: Address; amountAtomic: bigint }>, token: string, to: string): bigint {
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  return transfers.filter((t) => same(t.token, token) && same(t.to, to)).reduce((n, t) => n + t.amountAtomic, 0n);
}

async function servicePayouts(stack: RehearsalStack) {
  const rows = await stack.db.prisma.paymentPayout.findMany({ where: { payoutId: { not: null } } });
  return rows.map((r) => ({ paymentId: r.paymentId, payoutId: r.payoutId, sourceAtomic: BigInt(r.sourceAtomic.toFixed()) }));
}

/** The provider's own records: its state file, as it keeps it across restarts. */
function providerPayouts(providerDir: string): ProviderPayout[] {
  const state = JSON.parse(readFileSync(path.join(providerDir, 'state.json'), 'utf8')) as {
    payouts: Record<string, { payoutId: string; paymentId: string; request: { amountAtomic: string } }>;
  };
  return Object.values(state.payouts).map((p) => ({
    payoutId: p.payoutId,
    paymentId: p.paymentId,
    amountAtomic: BigInt(p.request.amountAtomic),
  }));
}

/** The status each released deposit ended in. */
async function depositStatuses(stack: RehearsalStack, released: ReleasedHold[]): Promise<Map<string, string>> {
  const ids = released.filter((r) => r.kind === 'deposit').map((r) => r.id);
  const rows = await stack.db.prisma.deposit.findMany({ where: { id: { in: ids } }, select: { id: true, status: true } });
  return new Map(rows.map((r) => [r.id, r.status]));
}

/** Everything held for an operator, as `Payment <id>`, `deposit <id>`, `refund <id>`. */
async function heldItems(stack: RehearsalStack): Promise<Hold[]> {
  const prisma = stack.db.prisma;
  const payments = await prisma.payment.findMany({ where: { operationalState: HELD }, select: { id: true, operationalReasonCode: true } });
  const deposits = await prisma.deposit.findMany({ where: { status: HELD }, select: { id: true, settlementReasonCode: true } });
  const returns = await prisma.fundReturn.findMany({ where: { status: HELD }, select: { id: true, kind: true, failureReason: true } });
  return [
    ...payments.map((p) => ({ what: `Payment ${p.id}`, reason: p.operationalReasonCode })),
    ...deposits.map((d) => ({ what: `deposit ${d.id}`, reason: d.settlementReasonCode })),
    ...returns.map((r) => ({ what: `${r.kind} ${r.id}`, reason: r.failureReason })),
  ];
}
