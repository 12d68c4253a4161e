import { z } from 'zod';
import type { PrismaClient } from '../../db/client';
import type { OperatorApproval } from '../../generated/prisma/client';
import type { AddressBook } from '../../custody';
import type { OperatorEngine } from '../engine/pure/engine';
import { ApiError, notFound } from '../requests/errors';
import { parseInput } from '../requests/validation';
import { newId } from '../values/ids';
import { payerShares } from '../payments/payer-shares';
import { checkRecovery, type FundReturnDeps } from '../returns/fund-returns';
import type { TCreateRecovery, TFundReturn } from '../returns/fund-return.schemas';
import type { ResolutionAction } from './pure/operator-resolution';
import { APPROVAL_TTL_SECONDS, needsSecondOperator, statusAt, type ApprovalStatus } from './pure/money-approval';
import { mayApprove } from './pure/operator-roles';
import { activeOperatorById, type SignedInOperator } from './operator-accounts';
import {
  checkHold,
  recoverIncident,
  resolveHold,
  writeAudit,
  type HeldTarget,
  type AuditEntry,
  type HoldDeps,
  type OperatorChannel,
  type OperatorTarget,
} from './operator-actions';

/**
 * Two people move money (docs/decisions/dashboard-and-console.md "Two people move money"). An operator
 * action that sends money where automation would not (pure/money-approval.ts) is stored as a request;
 * nothing moves and the partner sees nothing until a second operator, an approver who is not the
 * requester, approves it within APPROVAL_TTL_SECONDS. Approving carries the action out as it was asked,
 * through the same audited functions as every other operator action, naming the approval; the signer
 * checks the approval again before it pays a fund return anywhere but its payer.
 */
export interface ApprovalDeps extends HoldDeps {
  custody: AddressBook;
  engine: OperatorEngine;
}
type ReleaseDeps = HoldDeps & { engine: OperatorEngine };

/** Who acts, and through which channel. */
export interface Acting {
  operator: SignedInOperator;
  channel: OperatorChannel;
}

export interface ApprovalView {
  id: string;
  action: string;
  target: { type: string; id: string };
  params: Record<string, string>;
  reason: string;
  requestedBy: string;
  requestedAt: string;
  expiresAt: string;
  status: ApprovalStatus;
  decidedBy: string | null;
  decidedAt: string | null;
  resultId: string | null;
  /** Why the approved action was refused when carried out (status failed); otherwise null. */
  failure: string | null;
}

/** An action done at once, or a request that waits for a second operator. */
export type Outcome<T> = { done: T } | { approval: ApprovalView };

/** The emails of the operators who asked for and decided these requests, read in one query. */
async function emailsOf(prisma: PrismaClient, rows: OperatorApproval[]): Promise<Map<string, string>> {
  const ids = [...new Set(rows.flatMap((r) => (r.decidedBy ? [r.requestedBy, r.decidedBy] : [r.requestedBy])))];
  return new Map(
    (await prisma.operator.findMany({ where: { id: { in: ids } }, select: { id: true, email: true } })).map((o) => [o.id, o.email]),
  );
}

function viewOf(row: OperatorApproval, people: Map<string, string>, now: Date): ApprovalView {
  return {
    id: row.id,
    action: row.action,
    target: { type: row.targetType, id: row.targetId },
    params: row.params as Record<string, string>,
    reason: row.reason,
    requestedBy: people.get(row.requestedBy) ?? row.requestedBy,
    requestedAt: row.requestedAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    status: statusAt(row, now),
    decidedBy: row.decidedBy ? (people.get(row.decidedBy) ?? row.decidedBy) : null,
    decidedAt: row.decidedAt?.toISOString() ?? null,
    resultId: row.resultId,
    failure: row.failure,
  };
}

async function viewOne(prisma: PrismaClient, row: OperatorApproval, now = new Date()): Promise<ApprovalView> {
  return viewOf(row, await emailsOf(prisma, [row]), now);
}

/** What the audit shows of a request's input: its facts, not the action it already names. */
const auditParams = (params: Record<string, string>) => Object.fromEntries(Object.entries(params).filter(([k]) => k !== 'action'));

async function request(
  deps: { prisma: PrismaClient },
  who: Acting,
  action: string,
  target: HeldTarget,
  params: Record<string, string>,
  reason: string,
): Promise<{ approval: ApprovalView }> {
  // A request names the operator a second one must differ from: never a typed name (the CLI's).
  if (!(await activeOperatorById(deps.prisma, who.operator.id)))
    throw new ApiError('forbidden', 'Asking for a second operator needs an operator: sign in, or give the CLI --actor <operator email>');
  const now = new Date();
  const row = await deps.prisma.$transaction(async (tx) => {
    const created = await tx.operatorApproval.create({
      data: {
        id: newId('operatorApproval'),
        action,
        targetType: target.type,
        targetId: target.id,
        params,
        reason,
        requestedBy: who.operator.id,
        requestedAt: now,
        expiresAt: new Date(now.getTime() + APPROVAL_TTL_SECONDS * 1000),
        status: 'pending',
      },
    });
    await writeAudit(
      tx,
      {
        actor: who.operator.email,
        channel: who.channel,
        action: action as never,
        target,
        reason,
        details: { ...auditParams(params), approvalId: created.id },
      },
      'requested',
      `waits for a second operator until ${created.expiresAt.toISOString()}`,
    );
    return created;
  });
  return { approval: await viewOne(deps.prisma, row, now) };
}

/** A request's checks: refused for what the action itself would be refused for, audited as its refusal. */
async function refusalsAudited<T>(prisma: PrismaClient, entry: AuditEntry, check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) await writeAudit(prisma, entry, 'refused', err.message);
    throw err;
  }
}

/** Releases a hold: at once, or, for a mark-settled or a funded Payment's fail, as a request. */
export async function releaseHold(
  deps: ReleaseDeps,
  who: Acting,
  target: HeldTarget,
  input: { action: ResolutionAction; txHash?: string; reason?: string },
): Promise<Outcome<unknown>> {
  const fundedPayment = target.type === 'payment' && input.action === 'fail' && (await payerShares(deps.prisma, target.id)).length > 0;
  if (needsSecondOperator({ action: input.action, target: target.type, fundedPayment })) {
    const details: Record<string, string> = input.txHash ? { txHash: input.txHash } : {};
    const entry = { actor: who.operator.email, channel: who.channel, action: input.action, target, reason: input.reason ?? null, details };
    await refusalsAudited(deps.prisma, entry, async () => {
      if (!input.reason) throw new ApiError('bad_request', 'Say why: a request for a second operator needs a reason');
      await checkHold(deps, target, { ...input, actor: who.operator.email });
    });
    const params = { action: input.action, ...(input.txHash ? { txHash: input.txHash } : {}) };
    return request(deps, who, input.action, target, params, input.reason!);
  }
  return { done: await resolveHold(deps, deps.engine, target, { ...input, actor: who.operator.email }, who.channel) };
}

/** Recovers an incident's funds: to its payer at once, anywhere else as a request. */
export async function recoverFunds(
  deps: FundReturnDeps,
  who: Acting,
  paymentId: string,
  input: TCreateRecovery & { reason: string },
): Promise<Outcome<TFundReturn>> {
  const details: Record<string, string> = {
    incidentId: input.incidentId,
    ...(input.destinationAddress ? { destinationAddress: input.destinationAddress } : {}),
  };
  const entry = {
    actor: who.operator.email,
    channel: who.channel,
    action: 'recover-incident' as const,
    target: { type: 'payment' as const, id: paymentId },
    reason: input.reason,
    details,
  };
  const { payers } = await refusalsAudited(deps.prisma, entry, () =>
    checkRecovery(deps, { by: 'operator', actor: who.operator.email }, paymentId, input),
  );
  if (needsSecondOperator({ action: 'recover-incident', destinationAddress: input.destinationAddress, payers })) {
    const params = { incidentId: input.incidentId, destinationAddress: input.destinationAddress! };
    return request(deps, who, 'recover-incident', { type: 'payment', id: paymentId }, params, input.reason);
  }
  return { done: await recoverIncident(deps, { actor: who.operator.email, channel: who.channel }, paymentId, input) };
}

const ZApprovalId = z
  .string()
  .regex(/^approval_[A-Za-z0-9]+$/, 'an approval id (approval_...)')
  .max(64);

async function decide(deps: ApprovalDeps, who: Acting, id: string, verdict: 'approved' | 'rejected', note: string | null) {
  const approvalId = parseInput(ZApprovalId, id, 'path');
  const row = await deps.prisma.operatorApproval.findUnique({ where: { id: approvalId } });
  if (!row) throw notFound('Approval');
  const target: OperatorTarget = { type: 'approval', id: row.id };
  const entry = {
    actor: who.operator.email,
    channel: who.channel,
    action: verdict === 'approved' ? ('approve' as const) : ('reject' as const),
    target,
    reason: note,
    details: { action: row.action, requestedBy: row.requestedBy },
  };
  const refuse = async (err: ApiError) => {
    await writeAudit(deps.prisma, entry, 'refused', err.message);
    return err;
  };
  if (!mayApprove(who.operator, row.requestedBy))
    throw await refuse(new ApiError('forbidden', 'A second operator with the approver role decides: not the one who asked'));
  const now = new Date();
  const claimed = await deps.prisma.$transaction(async (tx) => {
    const taken = await tx.operatorApproval.updateMany({
      where: { id: row.id, status: 'pending', expiresAt: { gt: now } },
      data: { status: verdict, decidedBy: who.operator.id, decidedAt: now },
    });
    if (taken.count === 1) await writeAudit(tx, entry, 'applied', null);
    return taken.count === 1;
  });
  if (!claimed) {
    const status = statusAt(row, now);
    if (status === 'expired')
      await deps.prisma.operatorApproval.updateMany({ where: { id: row.id, status: 'pending' }, data: { status: 'expired' } });
    throw await refuse(new ApiError('conflict', `This request is ${status === 'pending' ? 'being decided' : status} already`));
  }
  return row;
}

/**
 * Approves another operator's request and carries it out, as it was asked, under the approver's name.
 * An action refused for what it is (its item released or recovered meanwhile) changed nothing: the
 * approval is then `failed`, with the refusal, so it never stands approved with nothing done. Any
 * other error leaves it approved (the action may have happened; the audit says what failed).
 */
export async function approveRequest(deps: ApprovalDeps, who: Acting, id: string): Promise<{ approval: ApprovalView; result: unknown }> {
  const row = await decide(deps, who, id, 'approved', null);
  const result = await carryOut(deps, who, row).catch(async (err: unknown) => {
    if (err instanceof ApiError && err.status < 500)
      await deps.prisma.operatorApproval.updateMany({
        where: { id: row.id, status: 'approved', resultId: null },
        data: { status: 'failed', failure: err.message.slice(0, 1000) },
      });
    throw err;
  });
  const fresh = await deps.prisma.operatorApproval.findUniqueOrThrow({ where: { id: row.id } });
  return { approval: await viewOne(deps.prisma, fresh), result };
}

async function carryOut(deps: ApprovalDeps, who: Acting, row: OperatorApproval): Promise<unknown> {
  const params = row.params as Record<string, string>;
  if (row.action === 'recover-incident') {
    const recovery = await recoverIncident(deps, { actor: who.operator.email, channel: who.channel }, row.targetId, {
      incidentId: params.incidentId!,
      destinationAddress: params.destinationAddress as `0x${string}`,
      reason: row.reason,
      approvalId: row.id,
    });
    await deps.prisma.operatorApproval.update({ where: { id: row.id }, data: { resultId: recovery.id } });
    return { incidentRecovery: recovery };
  }
  const target = { type: row.targetType, id: row.targetId } as HeldTarget;
  const action = params.action as ResolutionAction;
  const req = { action, reason: row.reason, actor: who.operator.email, ...(params.txHash ? { txHash: params.txHash } : {}) };
  return resolveHold(deps, deps.engine, target, req, who.channel, row.id);
}

export async function rejectRequest(deps: ApprovalDeps, who: Acting, id: string, note?: string) {
  const row = await decide(deps, who, id, 'rejected', note ?? null);
  const fresh = await deps.prisma.operatorApproval.findUniqueOrThrow({ where: { id: row.id } });
  return { approval: await viewOne(deps.prisma, fresh) };
}

/** The requests, newest first: pending ones (expired excluded) by default. */
export async function listApprovals(prisma: PrismaClient, opts: { pendingOnly: boolean; limit?: number }) {
  const now = new Date();
  const rows = await prisma.operatorApproval.findMany({
    where: opts.pendingOnly ? { status: 'pending', expiresAt: { gt: now } } : {},
    orderBy: [{ requestedAt: 'desc' }, { id: 'desc' }],
    take: opts.limit ?? 100,
  });
  const people = await emailsOf(prisma, rows);
  return { items: rows.map((r) => viewOf(r, people, now)) };
}
