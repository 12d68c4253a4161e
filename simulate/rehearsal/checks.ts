import { CLUSTER_ROLES } from '../../src/embedded/temporal-cluster-config';
import { checkBooks } from '../verify';
import type { WebhookReceiver } from '../webhook-receiver';
import type { Recorder } from './partner';
import type { RehearsalStack } from './stack';

/**
 * The end of a rehearsal: everything at rest, then what must hold after its faults. Every Payment,
 * deposit, return and vault payment is terminal or held for an operator with a reason; the books
 * balance and equal the chains; every committed event reached its partner's receiver, signature
 * verified; no answer was a 5xx but a 503 with Retry-After during an outage; and every part runs.
 */

export interface Outage {
  what: string;
  at: number;
  backAt: number;
  error?: string;
}

const TERMINAL = {
  payment: ['succeeded', 'failed', 'cancelled', 'expired'],
  deposit: ['settled', 'reversed', 'failed', 'ignored'],
  return: ['confirmed', 'failed'],
  vaultFunding: ['confirmed', 'failed'],
};
const HELD = 'requires_intervention';
/** A 503 this long after a part came back still counts as that outage's (clients were backing off). */
const OUTAGE_TAIL_MS = 60_000;

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

/** Waits (bounded) until every committed event of each app reached its receiver; answers the missing ones. */
async function undelivered(
  stack: RehearsalStack,
  apps: Record<string, string>,
  receivers: Record<string, WebhookReceiver>,
  deadlineMs: number,
): Promise<{ committed: number; missing: string[] }> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const missing: string[] = [];
    let committed = 0;
    for (const [environment, appId] of Object.entries(apps)) {
      const events = await stack.db.prisma.event.findMany({ where: { appId }, select: { id: true, name: true } });
      committed += events.length;
      for (const e of events)
        if (!receivers[environment]!.delivered.has(e.id)) missing.push(`event ${e.id} (${e.name}, ${environment}) never delivered`);
    }
    if (missing.length === 0 || Date.now() > deadline) return { committed, missing };
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
  for (const role of CLUSTER_ROLES) {
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

export async function checkRehearsal(o: {
  stack: RehearsalStack;
  apps: Record<string, string>;
  receivers: Record<string, WebhookReceiver>;
  recorder: Recorder;
  outages: Outage[];
  restless: string[];
  flowErrors: string[];
  log: (line: string) => void;
}) {
  const failures: string[] = [];
  for (const o2 of o.outages) if (o2.error) failures.push(`${o2.what}: did not come back: ${o2.error}`);
  failures.push(...o.flowErrors.map((e) => `partner flow failed: ${e}`));
  failures.push(...o.restless.slice(0, 50).map((w) => `not at rest: ${w}`));
  if (o.restless.length > 50) failures.push(`... and ${o.restless.length - 50} more not at rest`);

  const events = await undelivered(o.stack, o.apps, o.receivers, 180_000);
  failures.push(...events.missing.slice(0, 50));
  for (const [environment, r] of Object.entries(o.receivers))
    for (const refused of r.refused) failures.push(`a ${environment} webhook request failed verification: ${refused}`);

  for (const b of o.recorder.broken)
    failures.push(
      `${b.op} answered ${b.status}${b.retryAfter ? ` (Retry-After ${b.retryAfter})` : ' without Retry-After'} at ${new Date(b.at).toISOString()}: ${b.text}`,
    );
  const windows = [...o.outages, ...o.stack.crashes.map((c) => ({ at: c.at, backAt: c.backAt ?? Date.now() }))];
  const during = (at: number) => windows.some((x) => at >= x.at && at <= x.backAt + OUTAGE_TAIL_MS);
  for (const c of o.stack.crashes)
    if (c.backAt === undefined) failures.push(`${c.name} exited by itself (${c.exit}: ${c.cause}) and did not come back`);
  for (const u of o.recorder.unavailable)
    if (!during(u.at)) failures.push(`${u.op} answered 503 at ${new Date(u.at).toISOString()}, outside every outage: ${u.text}`);

  const books = await checkBooks(o.stack);
  failures.push(...books.problems);
  failures.push(...(await partsRunning(o.stack)));
  failures.push(...(await scannersCurrent(o.stack)));

  const prisma = o.stack.db.prisma;
  const countBy = async (rows: Promise<Array<{ status: string; _count: { _all: number } }>>) =>
    Object.fromEntries((await rows).map((r) => [r.status, r._count._all]));
  const figures = {
    payments: await countBy(prisma.payment.groupBy({ by: ['status'], _count: { _all: true } }) as never),
    deposits: await countBy(prisma.deposit.groupBy({ by: ['status'], _count: { _all: true } }) as never),
    returns: await countBy(prisma.fundReturn.groupBy({ by: ['status'], _count: { _all: true } }) as never),
    vaultPayments: await countBy(prisma.vaultFundingOperation.groupBy({ by: ['status'], _count: { _all: true } }) as never),
    unexpectedExits: o.stack.crashes.map((c) => ({ name: c.name, at: new Date(c.at).toISOString(), exit: c.exit, cause: c.cause })),
    held: await heldByReason(o.stack),
    events: { committed: events.committed, delivered: events.committed - events.missing.length },
    ledger: { postings: books.ledger.postings, problems: books.ledger.problems.length },
    reconcile: { checked: books.reconcile.checked, differences: books.reconcile.differences.length },
  };
  return { failures, figures };
}

/** What waits for an operator, counted by kind and reason ("payment settlement_requires_intervention": 2). */
async function heldByReason(stack: RehearsalStack): Promise<Record<string, number>> {
  const prisma = stack.db.prisma;
  const payments = await prisma.payment.groupBy({
    by: ['operationalReasonCode'],
    where: { operationalState: HELD },
    _count: { _all: true },
  });
  const deposits = await prisma.deposit.groupBy({ by: ['settlementReasonCode'], where: { status: HELD }, _count: { _all: true } });
  return Object.fromEntries([
    ...payments.map((p) => [`payment ${p.operationalReasonCode ?? 'no reason'}`, p._count._all]),
    ...deposits.map((d) => [`deposit ${d.settlementReasonCode ?? 'no reason'}`, d._count._all]),
  ]);
}
