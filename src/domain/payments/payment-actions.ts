import type { Prisma, PrismaClient } from '../../db/client';
import { newId } from '../values/ids';
import type { IdempotentRequest } from '../requests/idempotency-records';

/**
 * option.execution.actionId: issued to one payer account for one option of one Payment, and used at
 * most once (confirm or authorize). A read reuses the account's live action for the option, so reads
 * don't pile up rows; once it is used or expired, the next read issues a new one.
 */
export async function issueAction(
  prisma: PrismaClient,
  input: { paymentId: string; optionId: string; accountId: string; proofType: string; expiresAt: Date },
  now = new Date(),
) {
  const live = await prisma.paymentAction.findFirst({
    where: { paymentId: input.paymentId, optionId: input.optionId, accountId: input.accountId, usedAt: null, expiresAt: { gt: now } },
    orderBy: { createdAt: 'desc' },
  });
  if (live) return live;
  return prisma.paymentAction.create({ data: { id: newId('nextAction'), ...input } });
}

export async function findAction(prisma: PrismaClient, actionId: string) {
  return prisma.paymentAction.findUnique({ where: { id: actionId } });
}

/**
 * Marks the action used; false when it was used (or expired) first: a race loses cleanly. The request
 * that used it (and an authorize's funding) is kept, so its identical retry after a 5xx is known.
 */
export async function consumeAction(
  prisma: PrismaClient,
  input: {
    actionId: string;
    proof: Prisma.InputJsonValue;
    metadata: Prisma.InputJsonValue;
    request?: IdempotentRequest | undefined;
    fundingOperationId?: string;
  },
  now = new Date(),
): Promise<boolean> {
  const { count } = await prisma.paymentAction.updateMany({
    where: { id: input.actionId, usedAt: null, expiresAt: { gt: now } },
    data: {
      usedAt: now,
      proof: input.proof,
      metadata: input.metadata,
      idempotencyKey: input.request?.key ?? null,
      requestHash: input.request?.requestHash ?? null,
      fundingOperationId: input.fundingOperationId ?? null,
    },
  });
  return count === 1;
}
