import type { Hash } from 'viem';
import type { TransactionStatus } from '../src/chain/types';
import { checkLedger, type LedgerCheckResult } from '../src/domain/ledger/check';
import { reconcileLedger } from '../src/domain/ledger/reconcile';
import type { ReconcileResult } from '../src/domain/ledger/pure/reconcile-report';
import { CHAIN_SCANNER_WORKFLOW } from '../workflows/contracts/chain-scanner';
import { DEPOSIT_WORKFLOW } from '../workflows/contracts/deposit';
import { PAYMENT_WORKFLOW } from '../workflows/contracts/payment';
import { WEBHOOK_DELIVERY_WORKFLOW, WEBHOOK_DISPATCHER_WORKFLOW } from '../workflows/contracts/webhooks';
import type { Plan, Scenario } from './plan';
import type { PaymentRecord, RunRecord } from './run';
import type { Stack } from './stack';

/**
 * The end of a run: wait (bounded) until everything has come to rest, then check what a partner sees
 * against what each scenario should yield, that no workflow is wedged, and that the books balance and
 * match the chain.
 */

const TERMINAL_PAYMENT = ['succeeded', 'failed', 'cancelled', 'expired'];
const TERMINAL_DEPOSIT = ['settled', 'reversed', 'failed', 'ignored'];
const HELD = 'requires_intervention';
/** A pending activity on this attempt or later has been failing for a while: wedged, not just busy. */
const WEDGED_ATTEMPT = 4;
const SERVICE_WORKFLOWS = [
  PAYMENT_WORKFLOW,
  DEPOSIT_WORKFLOW,
  CHAIN_SCANNER_WORKFLOW,
  WEBHOOK_DISPATCHER_WORKFLOW,
  WEBHOOK_DELIVERY_WORKFLOW,
];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface Verdict {
  failures: string[];
  /** Payments and deposits held for an operator, with the reason (allowed, but listed). */
  held: string[];
  paymentsByStatus: Record<string, number>;
  paymentsByScenario: Record<string, Record<string, number>>;
  depositsByStatus: Record<string, number>;
  incidents: number;
  ledger: { postings: number; problems: number };
  reconcile: { checked: number; differences: number };
  openAlerts: string[];
  /** Every operator alert raised during the run, open or resolved since, counted by kind and severity. */
  alertsRaised: Record<string, number>;
  /** The critical ones (money missing, a Payment's workflow gone), which nothing in a run should cause. */
  criticalAlerts: string[];
  settledInMs: number;
  /** From broadcast to the service's record of the transfer (payment_transfers or deposits). */
  detectionMs: { p50: number; p99: number; max: number };
  /** The failures with ids and amounts blanked, counted: what kinds of thing went wrong, how often. */
  failureKinds: Record<string, number>;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function kindOf(failure: string): string {
  return failure
    .replace(/\((\w+), payment_[0-9a-f]+\)/g, '($1)')
    .replace(/0x[0-9a-fA-F]+/g, '<hex>')
    .replace(/#\d+/g, '#n')
    .replace(/-?\d+(\.\d+)?/g, 'N');
}

/** Where the chain has each transfer: a 'not_found' or 'pending' one is the chain's or the payer's to explain, not the service's. */
async function chainStatusesOf(stack: Stack, txHashes: string[]): Promise<Map<string, TransactionStatus>> {
  const chain = stack.chain.chains.get(stack.chainId);
  const statuses = await Promise.all(txHashes.map((tx) => chain.getTransactionStatus(tx as Hash, 1)));
  return new Map(txHashes.map((tx, i) => [tx, statuses[i]!]));
}

/**
 * Waits until every Payment and deposit is terminal or held and their workflows have ended. Answers the
 * failures: what is still not at rest at the deadline, or at once the payers' transfers the chain reverted.
 */
async function waitUntilAtRest(stack: Stack, run: RunRecord, deadlineMs: number, log: (line: string) => void): Promise<string[]> {
  const prisma = stack.db.prisma;
  const paymentIds = run.payments.flatMap((r) => (r.id ? [r.id] : []));
  const paymentTxs = run.payments.flatMap((r) => r.sent.map((s) => s.txHash.toLowerCase()));
  const depositTxs = run.deposits.flatMap((r) => (r.sent ? [r.sent.txHash.toLowerCase()] : []));
  const accountIds = run.accounts.map((a) => a.id);
  const started = Date.now();
  let lastReport = 0;
  for (;;) {
    run.driver.poke();
    const waiting: string[] = [];
    try {
      const seenPayment = new Set(
        (await prisma.paymentTransfer.findMany({ where: { txHash: { in: paymentTxs } }, select: { txHash: true } })).map((t) => t.txHash),
      );
      const seenDeposit = new Set(
        (await prisma.deposit.findMany({ where: { txHash: { in: depositTxs } }, select: { txHash: true } })).map((d) => d.txHash),
      );
      const unrecorded = [...paymentTxs.filter((tx) => !seenPayment.has(tx)), ...depositTxs.filter((tx) => !seenDeposit.has(tx))];
      // A payer's transfer the chain reverted moved nothing: no service will ever record it.
      const onChain = await chainStatusesOf(stack, unrecorded);
      const reverted = unrecorded.filter((tx) => onChain.get(tx) === 'reverted');
      if (reverted.length > 0) return reverted.map((tx) => `transfer ${tx} reverted on chain: the simulated payer's send failed`);
      for (const tx of paymentTxs)
        if (!seenPayment.has(tx))
          waiting.push(`transfer ${tx} to an escrow address not recorded by the service (chain: ${onChain.get(tx)})`);
      for (const tx of depositTxs)
        if (!seenDeposit.has(tx))
          waiting.push(`transfer ${tx} to a deposit address not recorded by the service (chain: ${onChain.get(tx)})`);

      const payments = await prisma.payment.findMany({
        where: { id: { in: paymentIds } },
        select: { id: true, status: true, operationalState: true },
      });
      const heldPayments = new Set(payments.filter((p) => p.operationalState === HELD).map((p) => p.id));
      for (const p of payments) {
        if (!TERMINAL_PAYMENT.includes(p.status) && !heldPayments.has(p.id)) waiting.push(`Payment ${p.id} is ${p.status}`);
      }
      const deposits = await prisma.deposit.findMany({
        where: { accountId: { in: accountIds } },
        select: { id: true, status: true, workflowId: true },
      });
      for (const d of deposits)
        if (!TERMINAL_DEPOSIT.includes(d.status) && d.status !== HELD) waiting.push(`deposit ${d.id} is ${d.status}`);
      const heldDepositWorkflows = new Set(deposits.filter((d) => d.status === HELD).map((d) => d.workflowId));

      // A terminal Payment's workflow may still follow transfers it saw; it ends once they are resolved.
      for (const w of await stack.engine.listWorkflows(`ExecutionStatus = 'Running'`)) {
        if (w.type === PAYMENT_WORKFLOW && !heldPayments.has(w.workflowId))
          waiting.push(`workflow ${w.workflowId} (${w.type}) still running`);
        if (w.type === DEPOSIT_WORKFLOW && !heldDepositWorkflows.has(w.workflowId))
          waiting.push(`workflow ${w.workflowId} (${w.type}) still running`);
      }
    } catch (err) {
      waiting.push(`could not read the state: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (waiting.length === 0) return [];
    if (Date.now() - started > deadlineMs) {
      const late = waiting.slice(0, 50).map((w) => `not at rest after ${(deadlineMs / 1000).toFixed(0)} s: ${w}`);
      return waiting.length > 50 ? [...late, `... and ${waiting.length - 50} more not at rest`] : late;
    }
    if (Date.now() - lastReport > 15_000) {
      lastReport = Date.now();
      log(`waiting for ${waiting.length} thing(s) to come to rest, e.g. ${waiting[0]}`);
    }
    await sleep(2000);
  }
}

/**
 * `ledger check` (every posting balances, balances equal the entries) and `ledger reconcile` (every
 * service address's books equal the chain, money in flight aside), as problem lines.
 */
export async function checkBooks(
  stack: Pick<Stack, 'db' | 'chain'>,
): Promise<{ ledger: LedgerCheckResult; reconcile: ReconcileResult; problems: string[] }> {
  const prisma = stack.db.prisma;
  const problems: string[] = [];
  const ledger = await checkLedger(prisma);
  for (const p of ledger.problems) problems.push(`ledger check: ${p.code}: ${p.message}`);
  let reconcile = await reconcileLedger({ prisma, chains: stack.chain.chains, custody: stack.chain.addressBook });
  for (let attempt = 2; attempt <= 3 && !reconcile.ok; attempt += 1) {
    await sleep(5000); // a leg mined after the snapshot shows as a difference for a moment: look again
    reconcile = await reconcileLedger({ prisma, chains: stack.chain.chains, custody: stack.chain.addressBook });
  }
  for (const d of reconcile.differences) {
    problems.push(
      `ledger reconcile: ${d.purpose} ${d.address ?? d.book}: books ${d.ledgerAtomic}, chain ${d.chainAtomic}, in flight ${d.inFlightAtomic}, difference ${d.differenceAtomic}`,
    );
  }
  return { ledger, reconcile, problems };
}

function countBy<T>(items: T[], key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const i of items) out[key(i)] = (out[key(i)] ?? 0) + 1;
  return out;
}

const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);

export async function verifyRun(
  stack: Stack,
  plan: Plan,
  run: RunRecord,
  opts: { deadlineMs: number; log: (line: string) => void },
): Promise<Verdict> {
  const { log } = opts;
  const prisma = stack.db.prisma;
  const failures: string[] = [];
  const held: string[] = [];
  const fees = stack.environments.environments.sandbox.fees;
  const label = (r: PaymentRecord) => `Payment #${r.plan.index} (${r.plan.scenario}${r.id ? `, ${r.id}` : ''})`;

  for (const r of run.payments) for (const e of r.errors) failures.push(`${label(r)}: ${e}`);
  for (const r of run.deposits) for (const e of r.errors) failures.push(`deposit #${r.plan.index}: ${e}`);
  for (const f of run.faults) {
    const at = `fault ${f.fault.kind} at +${(f.startedAtMs / 1000).toFixed(1)}s`;
    if (f.error) failures.push(`${at} failed: ${f.error}`);
    if (f.skipped) log(`note: ${at} was not made: ${f.skipped}`);
  }

  const t0 = Date.now();
  const restless = await waitUntilAtRest(stack, run, opts.deadlineMs, log);
  const settledInMs = Date.now() - t0;

  // How long the service took to notice each transfer: a slow chain scanner shows here first.
  const recordedAt = new Map<string, number>();
  const allSent = [...run.payments.flatMap((r) => r.sent), ...run.deposits.flatMap((r) => (r.sent ? [r.sent] : []))];
  const txs = allSent.map((s) => s.txHash.toLowerCase());
  const rows = [
    ...(await prisma.paymentTransfer.findMany({ where: { txHash: { in: txs } }, select: { txHash: true, createdAt: true } })),
    ...(await prisma.deposit.findMany({ where: { txHash: { in: txs } }, select: { txHash: true, createdAt: true } })),
  ];
  for (const row of rows) recordedAt.set(row.txHash, Math.min(recordedAt.get(row.txHash) ?? Infinity, row.createdAt.getTime()));
  const lagOf = (txHash: string, sentAt: number) => {
    const at = recordedAt.get(txHash.toLowerCase());
    return at === undefined ? null : at - sentAt;
  };
  const lags = allSent
    .flatMap((s) => {
      const lag = lagOf(s.txHash, s.sentAt);
      return lag === null ? [] : [lag];
    })
    .sort((a, b) => a - b);
  const detectionMs = { p50: percentile(lags, 50), p99: percentile(lags, 99), max: lags[lags.length - 1] ?? 0 };

  failures.push(...restless);

  // What the partner sees, Payment by Payment, against what its scenario should yield.
  const paymentsByScenario: Record<string, Record<string, number>> = {};
  const finalStatus: string[] = [];
  const heldAccounts = new Set<number>();
  const expectedToWallet = new Map<number, bigint>();
  const addTo = (account: number, atomic: bigint) => expectedToWallet.set(account, (expectedToWallet.get(account) ?? 0n) + atomic);
  let incidents = 0;
  for (const r of run.payments) {
    if (!r.id) continue;
    const { body } = await run.client.get(`/v2/payments/${r.id}`);
    const p = body.payment;
    const expect = r.plan.expect;
    const isHeld = p.operationalState === HELD;
    const outcome = isHeld ? `held:${p.operationalReasonCode ?? 'no reason'}` : (p.status as string);
    finalStatus.push(outcome);
    const byScenario = (paymentsByScenario[r.plan.scenario as Scenario] ??= {});
    byScenario[outcome] = (byScenario[outcome] ?? 0) + 1;
    if (isHeld) {
      heldAccounts.add(r.plan.account);
      held.push(`${label(r)}: ${p.status}, held (${p.operationalReasonCode ?? 'no reason'})`);
      if (!p.operationalReasonCode) failures.push(`${label(r)}: held without a reason`);
    } else if (p.status !== expect.status) {
      failures.push(`${label(r)}: status ${p.status}, expected ${expect.status}`);
    }
    const wantCount = expect.incidents.length;
    const wantAmount = sum(expect.incidents.map((i) => i.amountAtomic));
    const summary = p.incidentRecoverySummary;
    if (summary.count !== wantCount || summary.requestedAmountAtomic !== wantAmount.toString()) {
      failures.push(
        `${label(r)}: incidentRecoverySummary count ${summary.count}, ${summary.requestedAmountAtomic} atomic; expected ${wantCount}, ${wantAmount}`,
      );
    }
    const rows = await prisma.paymentIncident.findMany({ where: { paymentId: r.id }, select: { kind: true, amountAtomic: true } });
    incidents += rows.length;
    const got = rows.map((i) => `${i.kind}:${i.amountAtomic.toFixed()}`).sort();
    const want = expect.incidents.map((i) => `${i.kind}:${i.amountAtomic}`).sort();
    if (got.join(',') !== want.join(',')) {
      // When each transfer went out against the expiry, and when the service noticed it: the usual story.
      const expiresAt = Date.parse(p.expiresAt as string);
      const timing = r.sent
        .map((t) => {
          const lag = lagOf(t.txHash, t.sentAt);
          return `sent ${((expiresAt - t.sentAt) / 1000).toFixed(0)} s before expiresAt, recorded ${lag === null ? 'never' : `${(lag / 1000).toFixed(0)} s later`}`;
        })
        .join('; ');
      failures.push(`${label(r)}: incidents [${got.join(', ')}], expected [${want.join(', ')}]${timing ? ` (${timing})` : ''}`);
    }
    if (!isHeld && p.status === 'succeeded') addTo(r.plan.account, BigInt(p.fees.merchantNetAmountAtomic as string));
    if (p.status === 'succeeded') {
      const a = r.plan.amountAtomic;
      const net = a - (a * BigInt(fees.platformFeeBps)) / 10_000n - (a * BigInt(fees.partnerFeeBps)) / 10_000n;
      if (p.fees.merchantNetAmountAtomic !== net.toString())
        failures.push(`${label(r)}: merchant net ${p.fees.merchantNetAmountAtomic}, expected ${net}`);
    }
  }

  // Deposits, as the partner lists them: one per transfer, settled net of fees, or ignored under the minimum.
  const minimum = 1_000_000n;
  const listed = new Map<string, any[]>();
  for (const account of run.accounts) {
    let cursor: string | null = null;
    do {
      const page: { body: { deposits: any[]; nextCursor: string | null } } = await run.client.get(
        `/v2/accounts/${account.id}/deposits?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      for (const d of page.body.deposits) listed.set(d.txHash.toLowerCase(), [...(listed.get(d.txHash.toLowerCase()) ?? []), d]);
      cursor = page.body.nextCursor;
    } while (cursor);
  }
  const depositStatuses: string[] = [];
  for (const r of run.deposits) {
    if (!r.sent) continue;
    const what = `deposit #${r.plan.index} (${r.sent.txHash})`;
    const found = listed.get(r.sent.txHash.toLowerCase()) ?? [];
    if (found.length !== 1) {
      failures.push(`${what}: listed ${found.length} times, expected once`);
      continue;
    }
    const d = found[0];
    depositStatuses.push(d.status === HELD ? `held:${d.settlement.reasonCode ?? 'no reason'}` : d.status);
    const a = r.plan.amountAtomic;
    if (d.amount.amount !== a.toString()) failures.push(`${what}: amount ${d.amount.amount}, sent ${a}`);
    if (d.status === HELD) {
      heldAccounts.add(r.plan.account);
      held.push(`${what}: held (${d.settlement.reasonCode ?? 'no reason'})`);
      if (!d.settlement.reasonCode) failures.push(`${what}: held without a reason`);
      continue;
    }
    const want = a >= minimum ? 'settled' : 'ignored';
    if (d.status !== want) failures.push(`${what}: status ${d.status}, expected ${want}`);
    if (d.status === 'settled') {
      const net = a - (a * BigInt(fees.platformFeeBps)) / 10_000n - (a * BigInt(fees.partnerFeeBps)) / 10_000n;
      if (d.fees.actualReceivedAmountAtomic !== net.toString())
        failures.push(`${what}: received ${d.fees.actualReceivedAmountAtomic} net, expected ${net}`);
      addTo(r.plan.account, net);
    }
  }

  // The money arrived: each recipient's wallet holds exactly what its settled Payments and deposits paid out.
  for (const [i, account] of run.accounts.entries()) {
    if (heldAccounts.has(i)) continue; // a held settlement may or may not have paid: an operator decides
    const balance = await run.driver.tokenBalance(account.wallet);
    const want = expectedToWallet.get(i) ?? 0n;
    if (balance !== want)
      failures.push(`recipient wallet of account #${i} holds ${balance} atomic, expected ${want} (settled Payments and deposits, net)`);
  }

  // No workflow wedged: nothing retrying an activity over and over, nothing of the service's failed.
  const running = await stack.engine.listWorkflows(`ExecutionStatus = 'Running'`);
  for (const w of running) {
    for (const a of await stack.engine.pendingActivities(w.workflowId).catch(() => [])) {
      if (a.attempt >= WEDGED_ATTEMPT)
        failures.push(
          `workflow ${w.workflowId} (${w.type}) wedged: ${a.activityType} on attempt ${a.attempt} (${a.lastFailure ?? 'no failure recorded'})`,
        );
    }
  }
  for (const type of [CHAIN_SCANNER_WORKFLOW, WEBHOOK_DISPATCHER_WORKFLOW]) {
    if (!running.some((w) => w.type === type)) failures.push(`no ${type} is running`);
  }
  const broken = await stack.engine.listWorkflows(
    `ExecutionStatus = 'Failed' OR ExecutionStatus = 'Terminated' OR ExecutionStatus = 'TimedOut'`,
  );
  for (const w of broken) {
    const line = `workflow ${w.workflowId} (${w.type}) ended ${w.status}`;
    // A reconciliation pass may fail while PostgreSQL is paused; the next scheduled pass starts over.
    if (SERVICE_WORKFLOWS.includes(w.type)) failures.push(line);
    else log(`note: ${line}`);
  }

  // The books: every posting balances, and every service address holds what its books say.
  const { ledger, reconcile, problems } = await checkBooks(stack);
  failures.push(...problems);

  // Alerts are for operators: reported here, not failed on (a pass may race a Payment that moves on).
  const raised = await prisma.operatorAlert.findMany({
    select: { kind: true, subject: true, severity: true, details: true, createdAt: true, resolvedAt: true },
  });
  const alerts = raised.filter((a) => a.resolvedAt === null);
  const criticalAlerts = raised
    .filter((a) => a.severity === 'critical')
    .map(
      (a) =>
        `${a.kind} ${a.subject} at ${a.createdAt.toISOString()}${a.resolvedAt ? `, resolved ${a.resolvedAt.toISOString()}` : ', open'}: ${JSON.stringify(a.details)}`,
    );
  return {
    failures,
    held,
    paymentsByStatus: countBy(finalStatus, (s) => s),
    paymentsByScenario,
    depositsByStatus: countBy(depositStatuses, (s) => s),
    incidents,
    ledger: { postings: ledger.postings, problems: ledger.problems.length },
    reconcile: { checked: reconcile.checked, differences: reconcile.differences.length },
    openAlerts: alerts.map((a) => `${a.kind} ${a.severity} ${a.subject}`),
    alertsRaised: countBy(raised, (a) => `${a.kind} ${a.severity}`),
    criticalAlerts,
    settledInMs,
    detectionMs,
    failureKinds: countBy(failures, kindOf),
  };
}
