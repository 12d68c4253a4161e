import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import type { Harness } from './harness';
import { historyFacts } from './history-facts';
import { bundleWithPatchProbe, replayWithPatchProbe, type ProbedReplay } from './patch-probe';

const { History } = temporal.api.history.v1;

/**
 * Histories as JSON through @temporalio/proto itself (longs, enums and bytes as strings): the SDK's
 * historyToJSON trips over a second protobufjs copy in this dependency tree ("type must be a Type").
 */
export function encodeHistory(history: unknown): unknown {
  return History.toObject(History.fromObject(history as Record<string, unknown>), { longs: String, enums: String, bytes: String });
}

export function decodeHistory(json: unknown) {
  return History.fromObject(json as Record<string, unknown>) as unknown as Parameters<typeof History.encode>[0];
}

export const HISTORIES_DIR = path.join(__dirname, '..', 'workflows', 'histories');

interface Candidate {
  name: string;
  workflowId: string;
  /** The latest run when absent. */
  runId?: string;
}

const nominated: Candidate[] = [];

/** A run a test drove somewhere worth recording (a continue-as-new): a candidate for the recording. */
export function nominateForRecording(name: string, workflowId: string, runId: string): void {
  nominated.push({ name, workflowId, runId });
}

/**
 * `RECORD_WORKFLOW_HISTORIES=<set> npm test` (a TEST_FILTER run works too) ends by recording, into
 * test/workflows/histories/<set>/ (today's date for `1`), the histories of this run that add coverage
 * to the committed ones: a history is written when no committed one has its outcome (the file name:
 * workflow type and how it ended) with the same patched() decisions (which patches it took, which it
 * replayed without), or when it continues as new and no committed history of its workflow does.
 * Candidates are every workflow the run left in the database (by outcome), the runs before the last of
 * every Payment and deposit that continued as new, and the runs tests nominated. Committed, they are
 * what the replay test runs against today's workflow code: a change that breaks one needs patched().
 */
export async function recordHistories(h: Harness): Promise<string[]> {
  const candidates = [...(await outcomeCandidates(h)), ...(await continuedAsNewCandidates(h)), ...nominated];
  const fetched: Array<Candidate & { history: unknown }> = [];
  for (const c of candidates) {
    try {
      fetched.push({ ...c, history: encodeHistory(await h.env.client.workflow.getHandle(c.workflowId, c.runId).fetchHistory()) });
    } catch (err) {
      console.error(`could not fetch ${c.name} (${c.workflowId}):`, err instanceof Error ? err.message : err);
    }
  }
  const committed = readdirSync(HISTORIES_DIR, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.json'))
    .map((f) => ({
      name: path.basename(f, '.json'),
      ...(JSON.parse(readFileSync(path.join(HISTORIES_DIR, f), 'utf8')) as { workflowId: string; history: unknown }),
    }));
  const bundle = await bundleWithPatchProbe();
  const replay = (hs: Array<{ workflowId: string; history: unknown }>) =>
    replayWithPatchProbe(
      bundle,
      hs.map((x) => ({ workflowId: x.workflowId, history: decodeHistory(x.history) })),
    );
  const covered = new Set<string>();
  const continued = new Set<string>();
  const note = (x: { name: string; history: unknown }, replayed: ProbedReplay) => {
    covered.add(coverageKey(x.name, replayed));
    const facts = historyFacts(x.history);
    if (facts.continuedAsNew && facts.workflowType) continued.add(facts.workflowType);
  };
  (await replay(committed)).forEach((r, i) => note(committed[i]!, r));

  const label =
    process.env.RECORD_WORKFLOW_HISTORIES && process.env.RECORD_WORKFLOW_HISTORIES !== '1'
      ? process.env.RECORD_WORKFLOW_HISTORIES
      : new Date().toISOString().slice(0, 10);
  const dir = path.join(HISTORIES_DIR, label);
  const written: string[] = [];
  const replayed = await replay(fetched);
  fetched.forEach((c, i) => {
    const r = replayed[i]!;
    if (r.error) return void console.error(`${c.name} (${c.workflowId}) does not replay against today's code:`, r.error.message);
    const facts = historyFacts(c.history);
    const newContinue = facts.continuedAsNew && facts.workflowType !== undefined && !continued.has(facts.workflowType);
    if (covered.has(coverageKey(c.name, r)) && !newContinue) return;
    note(c, r);
    mkdirSync(dir, { recursive: true });
    let file = path.join(dir, `${c.name}.json`);
    for (let n = 2; existsSync(file); n += 1) file = path.join(dir, `${c.name}-${n}.json`);
    writeFileSync(file, `${JSON.stringify({ workflowId: c.workflowId, history: c.history })}\n`);
    written.push(file);
  });
  return written;
}

/** An outcome under the patch decisions its replay took: what a recorded history covers. */
function coverageKey(name: string, replayed: ProbedReplay): string {
  const decisions = [...new Set(replayed.decisions.map((d) => `${d.patchId}=${d.used}`))].sort();
  return `${name.replace(/-\d+$/, '')}|${decisions.join(',')}`;
}

/** Every Payment and deposit that continued as new: the run before its latest (it ended continuing). */
async function continuedAsNewCandidates(h: Harness): Promise<Candidate[]> {
  const ids = [
    ...(await h.db.prisma.payment.findMany({ select: { id: true }, orderBy: { createdAt: 'asc' } })).map((p) => ({
      type: 'payment',
      workflowId: p.id,
    })),
    ...(await h.db.prisma.deposit.findMany({ select: { workflowId: true }, orderBy: { createdAt: 'asc' } })).map((d) => ({
      type: 'deposit',
      workflowId: d.workflowId,
    })),
  ];
  const out: Candidate[] = [];
  for (const { type, workflowId } of ids) {
    // Only the latest run's first event: its start says which run it continued.
    const page = await h.env.client.workflowService
      .getWorkflowExecutionHistory({ namespace: h.env.namespace ?? 'default', execution: { workflowId }, maximumPageSize: 1 })
      .catch(() => undefined);
    const runId = page?.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    if (runId) out.push({ name: `${type}--continued-as-new`, workflowId, runId });
  }
  return out;
}

/**
 * `RECORD_WORKFLOW_HISTORIES=1 npm test` writes, after the whole run, one history per distinct outcome
 * of every workflow type to test/workflows/histories/. Committed, they are what the replay test runs
 * against the current workflow code: a change that breaks a recorded history needs patched().
 */
async function outcomeCandidates(h: Harness): Promise<Candidate[]> {
  const prisma = h.db.prisma;
  const candidates: Candidate[] = [];
  const pick = (name: string, workflowId: string) => void candidates.push({ name, workflowId });

  const payments = await prisma.payment.findMany({
    orderBy: { createdAt: 'asc' },
    select: { id: true, intent: true, status: true, operationalState: true, offrampStatus: true, incidents: { select: { kind: true } } },
  });
  for (const p of payments) {
    const incidents = [...new Set(p.incidents.map((i) => i.kind))].sort().join('+') || 'clean';
    // Bank Payments by their payout's end too.
    const bank = p.offrampStatus ? `bank-${p.offrampStatus}-` : '';
    pick(`payment--${p.intent}-${bank}${p.status}-${p.operationalState}-${incidents}`, p.id);
  }
  // A Payment once held (a data error, a settlement hold) and released, whatever its end.
  const held = await prisma.event.findMany({
    where: { name: 'payment.requires_intervention' },
    select: { resourceId: true },
    orderBy: { createdAt: 'asc' },
  });
  for (const e of held) {
    const p = payments.find((x) => x.id === e.resourceId);
    if (p && p.operationalState === 'normal') pick(`payment--held-then-${p.status}`, p.id);
  }
  const resolved = await prisma.paymentResolution.findMany({ select: { paymentId: true, action: true } });
  for (const r of resolved) pick(`payment--resolved-${r.action}`, r.paymentId);

  const deposits = await prisma.deposit.findMany({ orderBy: { createdAt: 'asc' } });
  for (const d of deposits) pick(`deposit--${d.status}-${d.settlementStatus}`, d.workflowId);
  const heldDeposits = await prisma.event.findMany({
    where: { name: 'deposit.requires_intervention' },
    select: { resourceId: true },
    orderBy: { createdAt: 'asc' },
  });
  for (const e of heldDeposits) {
    const d = deposits.find((x) => x.id === e.resourceId && x.settlementReasonCode === null && x.status === 'settled');
    if (d) pick(`deposit--held-then-${d.status}`, d.workflowId);
  }
  const depositResolutions = await prisma.depositResolution.findMany({ include: { deposit: true } });
  for (const r of depositResolutions) {
    pick(`deposit--resolved-${r.action}`, r.deposit.workflowId);
  }

  const deliveries = await prisma.webhookDelivery.findMany({ orderBy: { createdAt: 'asc' } });
  for (const d of deliveries) {
    const base = `webhook-delivery:${d.eventId}:${d.endpointId}`;
    pick(`webhook-delivery--${d.status}-round${Math.min(d.round, 2)}`, d.round <= 1 ? base : `${base}:redelivery-${d.round - 1}`);
  }
  pick('webhook-dispatcher--running', 'webhook-dispatcher');
  // Funding operations run by a workflow (tests also drive the activities directly, without one).
  for (const f of await prisma.vaultFundingOperation.findMany({ orderBy: { createdAt: 'asc' } })) {
    const workflowId = `vault-funding:${f.id}`;
    const ran = await h.env.client.workflow
      .getHandle(workflowId)
      .describe()
      .then(
        () => true,
        () => false,
      );
    if (ran) pick(`vault-funding--${f.status}`, workflowId);
  }
  // Refunds and incident recoveries, each by its FundReturnWorkflow.
  for (const r of await prisma.fundReturn.findMany({ orderBy: { createdAt: 'asc' } }))
    pick(`fund-return--${r.kind}-${r.status}`, `fund-return:${r.id}`);
  pick('chain-scanner--running', `chain-scanner:${h.chainId}`);

  const reconciliationId = `deposit-reconciliation:recorded-${Date.now()}`;
  await h.env.client.workflow.execute('depositReconciliationWorkflow', {
    taskQueue: h.taskQueue,
    workflowId: reconciliationId,
    args: [{ settledSince: new Date(0).toISOString() }],
  });
  pick('deposit-reconciliation--completed', reconciliationId);
  // The other reconciliation passes: a short recheck so a difference left by the run shows its timer too.
  for (const [type, input] of [
    ['ledgerReconciliationWorkflow', { recheckAfterSeconds: 1 }],
    ['paymentReconciliationWorkflow', { graceSeconds: 0 }],
  ] as const) {
    const workflowId = `${type === 'ledgerReconciliationWorkflow' ? 'ledger' : 'payment'}-reconciliation:recorded-${Date.now()}`;
    await h.env.client.workflow.execute(type, { taskQueue: h.taskQueue, workflowId, args: [input] });
    pick(`${type === 'ledgerReconciliationWorkflow' ? 'ledger' : 'payment'}-reconciliation--completed`, workflowId);
  }

  return candidates;
}
