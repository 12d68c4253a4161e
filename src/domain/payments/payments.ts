import type { Client } from '@temporalio/client';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Prisma, PrismaClient } from '../../db/client';
import { ApiError, notFound } from '../../http/errors';
import { afterPosition, pageOf, type CursorCodec } from '../../http/pagination';
import type { AuthenticatedApp } from '../apps';
import { cancelUpdate, PAYMENT_NOT_CANCELABLE, resolveSignal, type OperatorResolution } from '../../../workflows/payment-api';
import type { TCancelPayment, TListPaymentsQuery } from './payment.schemas';
import { toNextAction, toPaymentView, type PaymentRow } from './payment-view';

export async function loadPayment(prisma: PrismaClient, appId: string, paymentId: string): Promise<PaymentRow> {
  const p = await prisma.payment.findFirst({ where: { id: paymentId, appId }, include: { incidents: true } });
  if (!p) throw notFound('Payment');
  return p;
}

export function paymentResponse(p: PaymentRow) {
  return { payment: toPaymentView(p), nextAction: toNextAction(p) };
}

export async function listPayments(prisma: PrismaClient, app: AuthenticatedApp, query: TListPaymentsQuery, cursors: CursorCodec) {
  const filters: Prisma.PaymentWhereInput = {
    appId: app.id,
    ...(query.externalReference ? { externalReference: query.externalReference } : {}),
    ...(query.status ? { status: query.status } : {}),
    ...(query.createdFrom || query.createdTo
      ? { createdAt: { ...(query.createdFrom ? { gte: new Date(query.createdFrom) } : {}), ...(query.createdTo ? { lt: new Date(query.createdTo) } : {}) } }
      : {}),
  };
  // The cursor is bound to the filters, so it can't be replayed against another list.
  const scope = `payments:${app.id}:${query.externalReference ?? ''}:${query.status ?? ''}:${query.createdFrom ?? ''}:${query.createdTo ?? ''}`;
  const position = query.cursor ? cursors.decode(scope, query.cursor) : undefined;
  const rows = await prisma.payment.findMany({
    where: { AND: [filters, afterPosition(position)] },
    include: { incidents: true },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: query.limit + 1,
  });
  const page = pageOf(rows, query.limit, cursors, scope);
  return { data: page.items.map(toPaymentView), nextCursor: page.nextCursor };
}

/**
 * Cancel is a workflow update: the PaymentWorkflow decides against its own state (funds seen or
 * not), so a cancel can't race a transfer the database hasn't recorded yet.
 */
export async function cancelPayment(
  prisma: PrismaClient,
  temporal: Client,
  app: AuthenticatedApp,
  paymentId: string,
  input: TCancelPayment,
): Promise<PaymentRow> {
  const p = await loadPayment(prisma, app.id, paymentId);
  if (p.status === 'cancelled') return p;
  if (p.intent === 'send') {
    throw new ApiError('payment_not_cancelable', 'Send Payments cannot be cancelled', { reasonCode: 'send_payment' });
  }
  try {
    await temporal.workflow.getHandle(paymentId).executeUpdate(cancelUpdate, { args: [{ reasonCode: input.reasonCode, reason: input.reason ?? null }] });
  } catch (err) {
    const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type === PAYMENT_NOT_CANCELABLE) {
      throw new ApiError('payment_not_cancelable', cause.message, { reasonCode: cause.details?.[0] ?? null, status: p.status });
    }
    const fresh = await loadPayment(prisma, app.id, paymentId);
    // The workflow has finished (expired, succeeded...): the stored status is the answer.
    if (fresh.status === 'cancelled') return fresh;
    if (['succeeded', 'failed', 'expired'].includes(fresh.status)) {
      throw new ApiError('payment_not_cancelable', `A ${fresh.status} Payment cannot be cancelled`, { reasonCode: 'not_open', status: fresh.status });
    }
    throw err;
  }
  return loadPayment(prisma, app.id, paymentId);
}

/** Operator release of a requires_intervention hold (a signal: the workflow records who and why). */
export async function resolvePayment(temporal: Client, paymentId: string, resolution: OperatorResolution): Promise<void> {
  await temporal.workflow.getHandle(paymentId).signal(resolveSignal, resolution);
}
