import type { Prisma, PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import { resolveDeposit } from '../deposits/deposits';
import type { OperatorEngine } from '../engine/pure/engine';
import { ApiError } from '../requests/errors';
import { newId } from '../values/ids';
import type { ResolutionAction, ResolutionRequest } from './pure/operator-resolution';
import { resolvePayment } from '../payments/payments';
import { createRecovery, type FundReturnDeps } from '../returns/fund-returns';
import { resolveFundReturn } from '../returns/fund-return-resolution';
import { revokeApp, rotateAppSecret, ZRevokeApp, ZRotateAppSecret, type RevokedApp, type RotatedAppSecret } from '../apps/app-credentials';
import { parseInput } from '../requests/validation';
import type { TCreateRecovery, TFundReturn } from '../returns/fund-return.schemas';

/**
 * The one home of operator actions on Payments, deposits, fund returns and app credentials, and of their audit: the console, the
 * CLI and the admin API call these, never resolvePayment/resolveDeposit/createRecovery directly, so
 * every request leaves one operator_actions row (who, when, why, what, the target, the outcome),
 * refusals included. A recovery's row is written in the transaction that creates the recovery; a
 * resolution is a signal (the workflow records the release in payment_/deposit_resolutions when it
 * applies it), so its row follows the signal.
 */
export const OPERATOR_CHANNELS = ['console', 'cli', 'admin_api'] as const;
export type OperatorChannel = (typeof OPERATOR_CHANNELS)[number];
/** The admin API's writes that the domain does not audit itself (src/http/admin-router.ts `audit`). */
export const ADMIN_API_ACTIONS = [
  'create-webhook-endpoint',
  'update-webhook-endpoint',
  'disable-webhook-endpoint',
  'enable-webhook-endpoint',
  'archive-webhook-endpoint',
  'rotate-webhook-secret',
  'redeliver-webhook',
  'recover-webhook-endpoint',
  'invite-dashboard-user',
  'remove-dashboard-user',
] as const;
export type AdminApiAction = (typeof ADMIN_API_ACTIONS)[number];
export type OperatorActionName = ResolutionAction | 'recover-incident' | 'rotate-secret' | 'revoke' | 'approve' | 'reject' | AdminApiAction;
/** What an operator can release (a held item), and what else an action may name (an app, an approval). */
export type HeldTarget = { type: 'payment' | 'deposit' | 'fund_return'; id: string };
export type AdminTarget = { type: 'app' | 'approval'; id: string };
export type OperatorTarget = HeldTarget | AdminTarget;
/**
 * signalled: the workflow was told (it applies the action); created: a recovery or a secret was
 * created; applied: done at once (a revocation); refused: the rules said no; failed: an error.
 */
export type OperatorOutcome = 'signalled' | 'created' | 'applied' | 'requested' | 'refused' | 'failed';

/** Who did what to which item, and why: what an action writes before its outcome is known. */
export interface AuditEntry {
  actor: string;
  channel: OperatorChannel;
  action: OperatorActionName;
  target: OperatorTarget;
  reason: string | null;
  details: Record<string, string>;
}

export interface OperatorActionView extends AuditEntry {
  id: string;
  outcome: OperatorOutcome;
  outcomeDetail: string | null;
  createdAt: string;
}
type Db = PrismaClient | Prisma.TransactionClient;
type Written = (db: Db, outcome: OperatorOutcome, detail: string | null) => Promise<void>;

export async function writeAudit(db: Db, entry: AuditEntry, outcome: OperatorOutcome, detail: string | null): Promise<void> {
  await db.operatorAction.create({
    data: {
      id: newId('operatorAction'),
      actor: entry.actor,
      channel: entry.channel,
      action: entry.action,
      targetType: entry.target.type,
      targetId: entry.target.id,
      reason: entry.reason,
      details: entry.details,
      outcome,
      outcomeDetail: detail,
    },
  });
}

/**
 * Runs an action and audits it once: `run` may write its success row itself (inside its own
 * transaction, through `write`), else it is written after; a refusal or error writes its own row
 * (any row inside a transaction that threw was rolled back with it) and is thrown on.
 */
async function audited<T>(
  prisma: PrismaClient,
  entry: AuditEntry,
  run: (write: Written) => Promise<T>,
  success: OperatorOutcome,
): Promise<T> {
  let written = false;
  const write: Written = async (db, outcome, detail) => {
    await writeAudit(db, entry, outcome, detail);
    written = true;
  };
  let value: T;
  try {
    value = await run(write);
  } catch (err) {
    const refused = err instanceof ApiError && err.status < 500;
    await writeAudit(prisma, entry, refused ? 'refused' : 'failed', err instanceof Error ? err.message : String(err));
    throw err;
  }
  if (!written) await writeAudit(prisma, entry, success, null);
  return value;
}

export interface HoldDeps {
  prisma: PrismaClient;
  chains: ChainRegistry;
}

/** Releases a held Payment, deposit or fund return (retry, mark-settled with a tx hash, fail), audited. */
export async function resolveHold(
  deps: HoldDeps,
  engine: Pick<OperatorEngine, 'resolvePayment' | 'resolveDeposit' | 'resolveUnrecordedDeposit' | 'resolveFundReturn'>,
  target: HeldTarget,
  request: ResolutionRequest,
  channel: OperatorChannel,
  /** The two-person approval this carries out, if any: named in the audit. */
  approvalId?: string,
) {
  // A deposit's and a return's settlement hash is stored lowercased (as the chain reader answers it).
  const req = target.type !== 'payment' && request.txHash ? { ...request, txHash: request.txHash.toLowerCase() } : request;
  const entry: AuditEntry = {
    actor: req.actor,
    channel,
    action: req.action,
    target,
    reason: req.reason ?? null,
    details: {
      ...(req.action === 'mark-settled' && req.txHash ? { txHash: req.txHash } : {}),
      ...(approvalId ? { approvalId } : {}),
    },
  };
  return audited(
    deps.prisma,
    entry,
    async () => {
      if (target.type === 'payment') return resolvePayment(deps, engine, target.id, req);
      if (target.type === 'deposit') return resolveDeposit(deps, engine, target.id, req);
      return resolveFundReturn(deps, engine, target.id, req);
    },
    'signalled',
  );
}

/** The engine of a check: every rule of a release is read and judged, and nothing is signalled. */
const NO_SIGNAL: Pick<OperatorEngine, 'resolvePayment' | 'resolveDeposit' | 'resolveUnrecordedDeposit' | 'resolveFundReturn'> = {
  resolvePayment: async () => undefined,
  resolveDeposit: async () => undefined,
  resolveUnrecordedDeposit: async () => undefined,
  resolveFundReturn: async () => undefined,
};

/**
 * Whether a release would be accepted now (the item exists and is held, a mark-settled's payout is on
 * chain as expected), without releasing anything: a request for a second operator is refused at once
 * for what its approval would be refused for. Throws what the release would throw.
 */
export async function checkHold(deps: HoldDeps, target: HeldTarget, request: ResolutionRequest): Promise<void> {
  const req = target.type !== 'payment' && request.txHash ? { ...request, txHash: request.txHash.toLowerCase() } : request;
  if (target.type === 'payment') await resolvePayment(deps, NO_SIGNAL, target.id, req);
  else if (target.type === 'deposit') await resolveDeposit(deps, NO_SIGNAL, target.id, req);
  else await resolveFundReturn(deps, NO_SIGNAL, target.id, req);
}

/** Returns an incident's funds from the Payment's escrow (createRecovery), audited in its transaction. */
export async function recoverIncident(
  deps: FundReturnDeps,
  who: { actor: string; channel: OperatorChannel },
  paymentId: string,
  input: TCreateRecovery & { reason: string; approvalId?: string },
): Promise<TFundReturn> {
  const entry: AuditEntry = {
    actor: who.actor,
    channel: who.channel,
    action: 'recover-incident',
    target: { type: 'payment', id: paymentId },
    reason: input.reason,
    details: {
      incidentId: input.incidentId,
      ...(input.destinationAddress ? { destinationAddress: input.destinationAddress } : {}),
      ...(input.approvalId ? { approvalId: input.approvalId } : {}),
    },
  };
  return audited(
    deps.prisma,
    entry,
    (write) => createRecovery(deps, { by: 'operator', actor: who.actor }, paymentId, input, (tx, row) => write(tx, 'created', row.id)),
    'created',
  );
}

/** Issues an app a new secret (shown once) with an overlap window for the previous ones, audited in its transaction. */
export async function rotateAppCredential(
  prisma: PrismaClient,
  channel: OperatorChannel,
  appId: string,
  body: unknown,
): Promise<RotatedAppSecret> {
  const input = parseInput(ZRotateAppSecret, body, 'body');
  const entry: AuditEntry = {
    actor: input.actor,
    channel,
    action: 'rotate-secret',
    target: { type: 'app', id: appId },
    reason: input.reason ?? null,
    details: { overlapSeconds: String(input.overlapSeconds) },
  };
  return audited(
    prisma,
    entry,
    (write) =>
      prisma.$transaction(async (tx) => {
        const rotated = await rotateAppSecret(tx, appId, input.overlapSeconds);
        // The audit never holds the secret, only when the previous ones end.
        await write(tx, 'created', `previous secrets expire at ${rotated.previousSecretsExpireAt}`);
        return rotated;
      }),
    'created',
  );
}

/** Refuses every secret and client token of an app at once, audited in its transaction. */
export async function revokeAppCredential(
  prisma: PrismaClient,
  channel: OperatorChannel,
  appId: string,
  body: unknown,
): Promise<RevokedApp> {
  const input = parseInput(ZRevokeApp, body, 'body');
  const entry: AuditEntry = {
    actor: input.actor,
    channel,
    action: 'revoke',
    target: { type: 'app', id: appId },
    reason: input.reason ?? null,
    details: {},
  };
  return audited(
    prisma,
    entry,
    (write) =>
      prisma.$transaction(async (tx) => {
        const revoked = await revokeApp(tx, appId);
        await write(tx, 'applied', `revoked at ${revoked.revokedAt}`);
        return revoked;
      }),
    'applied',
  );
}

/**
 * Audits an admin API write that the domain does not audit itself (src/http/admin-router.ts `audit`):
 * who, what and on which app, with its outcome.
 */
export async function recordAdminAction(
  prisma: PrismaClient,
  entry: { actor: string; channel: OperatorChannel; action: AdminApiAction; target: OperatorTarget },
  outcome: OperatorOutcome,
  detail: string | null,
): Promise<void> {
  await writeAudit(prisma, { ...entry, reason: null, details: {} }, outcome, detail);
}

function toView(r: Awaited<ReturnType<PrismaClient['operatorAction']['findUniqueOrThrow']>>): OperatorActionView {
  return {
    id: r.id,
    actor: r.actor,
    channel: r.channel as OperatorChannel,
    action: r.action as OperatorActionName,
    target: { type: r.targetType as OperatorTarget['type'], id: r.targetId },
    reason: r.reason,
    details: r.details as Record<string, string>,
    outcome: r.outcome as OperatorOutcome,
    outcomeDetail: r.outcomeDetail,
    createdAt: r.createdAt.toISOString(),
  };
}

/** The audit, newest first: of one target, or of all. */
export async function listOperatorActions(
  prisma: PrismaClient,
  opts: { target?: OperatorTarget; limit: number },
): Promise<OperatorActionView[]> {
  const rows = await prisma.operatorAction.findMany({
    where: opts.target ? { targetType: opts.target.type, targetId: opts.target.id } : {},
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: opts.limit,
  });
  return rows.map(toView);
}
