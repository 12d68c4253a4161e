import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import type { Harness } from './harness';

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

/**
 * `RECORD_WORKFLOW_HISTORIES=1 npm test` writes, after the whole run, one history per distinct outcome
 * of every workflow type to test/workflows/histories/. Committed, they are what the replay test runs
 * against the current workflow code: a change that breaks a recorded history needs patched().
 */
export async function recordHistories(h: Harness): Promise<string[]> {
  const prisma = h.db.prisma;
  const picks = new Map<string, string>();
  const pick = (name: string, workflowId: string) => {
    if (!picks.has(name)) picks.set(name, workflowId);
  };

  const payments = await prisma.payment.findMany({
    orderBy: { createdAt: 'asc' },
    select: { id: true, intent: true, status: true, operationalState: true, offrampStatus: true, incidents: { select: { kind: true } } },
  });
  for (const p of payments) {
    const incidents = [...new Set(p.incidents.map((i) => i.kind))].sort().join('+') || 'clean';
    // Bank Payments (issue 13) by their payout's end too.
    const bank = p.offrampStatus ? `bank-${p.offrampStatus}-` : '';
    pick(`payment--${p.intent}-${bank}${p.status}-${p.operationalState}-${incidents}`, p.id);
  }
  // A Payment once held (a data error, a settlement hold) and released, whatever its end.
  const held = await prisma.event.findMany({ where: { name: 'payment.requires_intervention' }, select: { resourceId: true }, orderBy: { createdAt: 'asc' } });
  for (const e of held) {
    const p = payments.find((x) => x.id === e.resourceId);
    if (p && p.operationalState === 'normal') pick(`payment--held-then-${p.status}`, p.id);
  }
  const resolved = await prisma.paymentResolution.findMany({ select: { paymentId: true, action: true } });
  for (const r of resolved) pick(`payment--resolved-${r.action}`, r.paymentId);

  const deposits = await prisma.deposit.findMany({ orderBy: { createdAt: 'asc' } });
  for (const d of deposits) pick(`deposit--${d.status}-${d.settlementStatus}`, d.workflowId);
  const heldDeposits = await prisma.event.findMany({ where: { name: 'deposit.requires_intervention' }, select: { resourceId: true }, orderBy: { createdAt: 'asc' } });
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
    const ran = await h.env.client.workflow.getHandle(workflowId).describe().then(() => true, () => false);
    if (ran) pick(`vault-funding--${f.status}`, workflowId);
  }
  // Refunds and incident recoveries, each by its FundReturnWorkflow.
  for (const r of await prisma.fundReturn.findMany({ orderBy: { createdAt: 'asc' } })) pick(`fund-return--${r.kind}-${r.status}`, `fund-return:${r.id}`);
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

  // A set per recording (RECORD_WORKFLOW_HISTORIES=<name>, or today's date): older sets stay and keep replaying.
  const label = process.env.RECORD_WORKFLOW_HISTORIES && process.env.RECORD_WORKFLOW_HISTORIES !== '1' ? process.env.RECORD_WORKFLOW_HISTORIES : new Date().toISOString().slice(0, 10);
  const dir = path.join(HISTORIES_DIR, label);
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const [name, workflowId] of picks) {
    try {
      const history = await h.env.client.workflow.getHandle(workflowId).fetchHistory();
      const file = path.join(dir, `${name}.json`);
      writeFileSync(file, `${JSON.stringify({ workflowId, history: encodeHistory(history) })}\n`);
      written.push(file);
    } catch (err) {
      console.error(`could not record ${name} (${workflowId}):`, err instanceof Error ? err.message : err);
    }
  }
  return written;
}
