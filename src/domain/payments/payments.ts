import type { Prisma, PrismaClient } from '../../db/client';
import { ApiError, notFound } from '../requests/errors';
import { afterPosition, pageOf, type CursorCodec } from '../requests/pagination';
import type { AuthenticatedApp } from '../apps/apps';
import type { PaymentEngine } from '../engine/pure/engine';
import { isHeld, type ResolutionRequest } from '../operators/pure/operator-resolution';
import type { ChainRegistry } from '../../chain/registry';
import { requirePayout } from '../settlement/manual-payout';
import { isFinalStatus } from './pure/payment-machine';
import { expectedPaymentPayout } from './payment-settlement';
import type { TCancelPayment, TListPaymentsQuery, TPaymentList } from './payment.schemas';
import { finalitiesOf, finalityOfOne, type FinalityDeps } from '../chain/finality';
import type { TFinality } from '../chain/finality.schemas';
import { PAYMENT_VIEW_INCLUDE, toNextAction, toPaymentView, type PaymentRow } from './payment-view';

export async function loadPayment(prisma: PrismaClient, appId: string, paymentId: string): Promise<PaymentRow> {
  const p = await prisma.payment.findFirst({ where: { id: paymentId, appId }, include: PAYMENT_VIEW_INCLUDE });
  if (!p) throw notFound('Payment');
  return p;
}

export function paymentResponse(p: PaymentRow, finality: TFinality) {
  return { payment: toPaymentView(p, finality), nextAction: toNextAction(p) };
}

/** A stored Payment as the API answers it, with its live finality. */
export async function paymentResponseOf(deps: FinalityDeps, p: PaymentRow, now = new Date()) {
  return paymentResponse(p, await finalityOfOne(deps, { kind: 'payment', id: p.id }, now));
}

export async function listPayments(
  deps: FinalityDeps,
  app: AuthenticatedApp,
  query: TListPaymentsQuery,
  cursors: CursorCodec,
): Promise<TPaymentList> {
  const filters: Prisma.PaymentWhereInput = {
    appId: app.id,
    ...(query.externalReference ? { externalReference: query.externalReference } : {}),
    ...(query.status ? { status: query.status } : {}),
    ...(query.createdFrom || query.createdTo
      ? {
          createdAt: {
            ...(query.createdFrom ? { gte: new Date(query.createdFrom) } : {}),
            ...(query.createdTo ? { lt: new Date(query.createdTo) } : {}),
          },
        }
      : {}),
  };
  // The cursor is bound to the filters, so it can't be replayed against another list.
  const scope = `payments:${app.id}:${query.externalReference ?? ''}:${query.status ?? ''}:${query.createdFrom ?? ''}:${query.createdTo ?? ''}`;
  const position = query.cursor ? cursors.decode(scope, query.cursor) : undefined;
  const rows = await deps.prisma.payment.findMany({
    where: { AND: [filters, afterPosition(position)] },
    include: PAYMENT_VIEW_INCLUDE,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: query.limit + 1,
  });
  const page = pageOf(rows, query.limit, cursors, scope);
  // The page's finality in one query, whatever its size.
  const finality = await finalitiesOf(deps, { kind: 'payment', ids: page.items.map((p) => p.id) }, new Date());
  return { data: page.items.map((p) => toPaymentView(p, finality.get(p.id)!)), nextCursor: page.nextCursor };
}

/**
 * Cancel is decided by the PaymentWorkflow against its own state (funds seen or not), so a cancel
 * can't race a transfer the database hasn't recorded yet.
 */
export async function cancelPayment(
  prisma: PrismaClient,
  engine: Pick<PaymentEngine, 'cancelPayment'>,
  app: AuthenticatedApp,
  paymentId: string,
  input: TCancelPayment,
): Promise<PaymentRow> {
  const p = await loadPayment(prisma, app.id, paymentId);
  if (p.status === 'cancelled') return p;
  if (p.intent === 'send') {
    throw new ApiError('payment_not_cancelable', 'Send Payments cannot be cancelled', { reasonCode: 'send_payment' });
  }
  const decision = await engine.cancelPayment(paymentId, { reasonCode: input.reasonCode, reason: input.reason ?? null });
  if (decision.outcome === 'unavailable') {
    // A 5xx: the Idempotency-Key is released, so the same request may be sent again.
    throw new ApiError('service_unavailable', 'The Payment did not answer in time; retry the cancel', undefined, {
      'Retry-After': String(decision.retryAfterSeconds),
    });
  }
  if (decision.outcome === 'not_stored') {
    throw new ApiError('internal_error', 'The cancellation could not be stored; the Payment is held for an operator');
  }
  if (decision.outcome === 'refused') {
    throw new ApiError('payment_not_cancelable', decision.message, { reasonCode: decision.reasonCode, status: p.status });
  }
  const fresh = await loadPayment(prisma, app.id, paymentId);
  if (decision.outcome === 'closed' && fresh.status !== 'cancelled') {
    // The workflow has finished (expired, succeeded...): the stored status is the answer.
    throw new ApiError('payment_not_cancelable', `A ${fresh.status} Payment cannot be cancelled`, {
      reasonCode: 'not_open',
      status: fresh.status,
    });
  }
  return fresh;
}

/**
 * Operator release of a requires_intervention hold (the workflow records who and why). A hand-made
 * payout (mark-settled) is checked against the chain first: the ledger will say "settled" on it.
 */
export async function resolvePayment(
  deps: { prisma: PrismaClient; chains: ChainRegistry },
  engine: Pick<PaymentEngine, 'resolvePayment'>,
  paymentId: string,
  request: ResolutionRequest,
) {
  const payment = await deps.prisma.payment.findUnique({ where: { id: paymentId } });
  if (!payment) throw notFound('Payment');
  if (!isHeld({ kind: 'payment', operationalState: payment.operationalState })) {
    throw new ApiError('conflict', `Payment ${paymentId} is not held (operationalState ${payment.operationalState})`);
  }
  if (isFinalStatus(payment.status) && request.action !== 'retry') {
    // Failing or settling it again would rewrite a final status (a succeeded Payment called failed).
    throw new ApiError(
      'conflict',
      `Payment ${paymentId} is already ${payment.status} (final): ${request.action} would change a final status; retry releases the hold and resumes what was held`,
      { reasonCode: 'payment_final', status: payment.status },
    );
  }
  const confirmations = deps.chains.network(payment.chainId).confirmations;
  if (request.action === 'mark-settled') {
    await requirePayout(deps, { type: 'payment', id: paymentId }, request.txHash ?? '', expectedPaymentPayout(payment, confirmations));
  }
  // A final Payment's run may have ended with the hold: the resolution then starts it again from the stored Payment.
  await engine.resolvePayment(payment, confirmations, request);
  return { paymentId, action: request.action, signalled: true };
}
