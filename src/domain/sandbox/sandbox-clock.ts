import type { Prisma, PrismaClient } from '../../db/client';
import type { AuthenticatedApp } from '../apps/apps';
import type { PaymentEngine } from '../engine/pure/engine';
import { writeEvents, type EventSubject } from '../event-log/events';
import { paymentEventIds, paymentSubject } from '../payments/payment-origin';
import { isOpenStatus } from '../payments/pure/payment-machine';
import { ApiError, notFound } from '../requests/errors';
import { assertSameRequest, type IdempotentRequest } from '../requests/idempotency-records';
import { newId } from '../values/ids';
import { writeVaultAudit } from '../vaults/vault-audit';
import { appActor, lockVault, requireVault } from '../vaults/vaults';
import { MAX_CLOCK_ADVANCED_SECONDS, type SandboxClockResource, type TAdvanceClock, type TSandboxClock } from './sandbox-clock.schemas';

/**
 * A sandbox app moves one resource's clock forward, as Stripe's test clocks do for this contract: a
 * Payment's (its expiry, its quotes) or a vault policy approval's (its codes). The resource's own
 * deadlines then decide as they would have that much later: a Payment's workflow timers, an
 * approval's code expiry. Each move is a row of sandbox_clock_moves (the audit), a
 * sandbox.clock_advanced event on the resource, and, for an approval, a vault audit row, written in
 * one transaction. Production credentials get 404: there is no such resource for them.
 */

type MoveRow = Awaited<ReturnType<PrismaClient['sandboxClockMove']['findFirstOrThrow']>>;

export function requireSandbox(app: Pick<AuthenticatedApp, 'environment'>): void {
  if (app.environment !== 'sandbox') throw new ApiError('not_found', 'Sandbox clocks exist only for sandbox credentials');
}

/** Where a resource's clock stands: the sum of its moves, in seconds (0: never moved). */
export async function clockAdvancedSeconds(db: Prisma.TransactionClient | PrismaClient, resource: SandboxClockResource, id: string) {
  const last = await db.sandboxClockMove.findFirst({
    where: { resourceType: resource, resourceId: id },
    orderBy: { advancedSeconds: 'desc' },
    select: { advancedSeconds: true },
  });
  return last?.advancedSeconds ?? 0;
}

/** Now on a resource's clock (a sandbox app's only: production resources are never moved). */
export async function clockNow(
  db: Prisma.TransactionClient | PrismaClient,
  app: Pick<AuthenticatedApp, 'environment'>,
  resource: SandboxClockResource,
  id: string,
  now = new Date(),
): Promise<Date> {
  if (app.environment !== 'sandbox') return now;
  return new Date(now.getTime() + (await clockAdvancedSeconds(db, resource, id)) * 1000);
}

function view(row: MoveRow): TSandboxClock {
  return {
    object: 'sandbox_clock',
    resourceType: row.resourceType as SandboxClockResource,
    resourceId: row.resourceId,
    moveId: row.id,
    seconds: row.seconds,
    advancedSeconds: row.advancedSeconds,
    clockTime: new Date(row.createdAt.getTime() + row.advancedSeconds * 1000).toISOString(),
    createdAt: row.createdAt.toISOString(),
  };
}

/** The move this request's key already made (a retry after a 5xx), if it is this very request. */
async function priorMove(prisma: PrismaClient, app: AuthenticatedApp, request: IdempotentRequest): Promise<MoveRow | null> {
  const row = await prisma.sandboxClockMove.findUnique({ where: { appId_idempotencyKey: { appId: app.id, idempotencyKey: request.key } } });
  if (row) assertSameRequest(row.requestHash, request);
  return row;
}

/** Records one move of a locked resource's clock and its event; answers the row. */
async function recordMove(
  tx: Prisma.TransactionClient,
  app: AuthenticatedApp,
  target: { resource: SandboxClockResource; id: string; subject: EventSubject; payload: Record<string, unknown> },
  seconds: number,
  request: IdempotentRequest,
): Promise<MoveRow> {
  const advancedSeconds = (await clockAdvancedSeconds(tx, target.resource, target.id)) + seconds;
  if (advancedSeconds > MAX_CLOCK_ADVANCED_SECONDS) {
    throw new ApiError('conflict', `A clock moves at most ${MAX_CLOCK_ADVANCED_SECONDS} seconds in all`, {
      reasonCode: 'sandbox_clock_limit',
      advancedSeconds: advancedSeconds - seconds,
    });
  }
  const row = await tx.sandboxClockMove.create({
    data: {
      id: newId('sandboxClockMove'),
      appId: app.id,
      resourceType: target.resource,
      resourceId: target.id,
      seconds,
      advancedSeconds,
      idempotencyKey: request.key,
      requestHash: request.requestHash,
    },
  });
  const clock = view(row);
  await writeEvents(tx, target.subject, row.id, [
    {
      name: 'sandbox.clock_advanced',
      payload: { ...target.payload, moveId: row.id, seconds, advancedSeconds, clockTime: clock.clockTime },
    },
  ]);
  return row;
}

export interface PaymentClockDeps {
  prisma: PrismaClient;
  engine: Pick<PaymentEngine, 'advancePaymentClock'>;
  confirmationsOf: (chainId: number) => number;
}

/**
 * POST /v2/sandbox/payments/{paymentId}/advance-clock. Only an open Payment has a clock that matters
 * (its expiry, its quote): one that has been accepted or has ended answers 409 payment_not_open. The
 * move commits first; the workflow is then told where the clock stands (the sum, so telling it twice
 * moves nothing twice). A 5xx from that leaves the move recorded under the key: the identical retry
 * tells the workflow again and answers the move.
 */
export async function advancePaymentClock(
  deps: PaymentClockDeps,
  app: AuthenticatedApp,
  paymentId: string,
  input: TAdvanceClock,
  request: IdempotentRequest,
): Promise<TSandboxClock> {
  requireSandbox(app);
  const move =
    (await priorMove(deps.prisma, app, request)) ??
    (await deps.prisma.$transaction(async (tx) => {
      const [locked] = await tx.$queryRaw<Array<{ id: string }>>`
        SELECT id FROM payments WHERE id = ${paymentId} AND app_id = ${app.id} FOR UPDATE`;
      if (!locked) throw notFound('Payment');
      const p = await tx.payment.findUniqueOrThrow({ where: { id: paymentId } });
      if (!isOpenStatus(p.status)) {
        throw new ApiError('payment_not_open', `A ${p.status} Payment's clock has nothing left to decide`, { status: p.status });
      }
      return recordMove(
        tx,
        app,
        { resource: 'payment', id: p.id, subject: paymentSubject(p), payload: paymentEventIds(p) },
        input.seconds,
        request,
      );
    }));
  const payment = await deps.prisma.payment.findUniqueOrThrow({ where: { id: paymentId } });
  await deps.engine.advancePaymentClock(payment, deps.confirmationsOf(payment.chainId), {
    advancedSeconds: await clockAdvancedSeconds(deps.prisma, 'payment', paymentId),
  });
  return view(move);
}

/**
 * POST /v2/sandbox/accounts/{accountId}/vault/policy/approval/advance-clock: moves the clock of the
 * policy waiting for approval, so its codes expire as they would that much later. No workflow times
 * an approval: verify reads the policy's clock.
 */
export async function advanceApprovalClock(
  prisma: PrismaClient,
  app: AuthenticatedApp,
  accountId: string,
  input: TAdvanceClock,
  request: IdempotentRequest,
): Promise<TSandboxClock> {
  requireSandbox(app);
  const prior = await priorMove(prisma, app, request);
  if (prior) return view(prior);
  const vault = await requireVault(prisma, app.id, accountId);
  const move = await prisma.$transaction(async (tx) => {
    await lockVault(tx, vault.id);
    const pending = await tx.vaultPolicy.findFirst({ where: { vaultId: vault.id, status: 'pending_approval' } });
    if (!pending) {
      throw new ApiError('conflict', 'No vault policy is waiting for approval: PUT the policy first', { reasonCode: 'no_pending_policy' });
    }
    const subject: EventSubject = { appId: app.id, apiVersion: app.apiVersion, accountId, resourceType: 'vault', resourceId: vault.id };
    const row = await recordMove(
      tx,
      app,
      { resource: 'vault_policy_approval', id: pending.id, subject, payload: { accountId, vaultId: vault.id, policyId: pending.id } },
      input.seconds,
      request,
    );
    await writeVaultAudit(tx, vault, {
      policyId: pending.id,
      eventType: 'vault.policy.approval_clock_advanced',
      actor: appActor(app),
      payload: { moveId: row.id, seconds: row.seconds, advancedSeconds: row.advancedSeconds },
    });
    return row;
  });
  return view(move);
}
