import type { Prisma } from '../../src/db/client';
import type { FundReturnDeps } from '../../src/domain/returns/fund-returns';
import { newId } from '../../src/domain/values/ids';
import { getHarness, type Harness } from '../support/harness';

/**
 * A decided two-person approval of an incident recovery to `destinationAddress`, as the approval flow
 * will write it (that flow is not built yet): requestedBy asked, decidedBy approved.
 */
export async function approvedApproval(a: {
  paymentId: string;
  incidentId: string;
  destinationAddress: string;
  requestedBy: string;
  decidedBy: string;
  status?: string;
}) {
  const h = await getHarness();
  const now = Date.now();
  const data: Prisma.OperatorApprovalUncheckedCreateInput = {
    id: newId('operatorApproval'),
    action: 'recover-incident',
    targetType: 'payment',
    targetId: a.paymentId,
    params: { destinationAddress: a.destinationAddress, incidentId: a.incidentId },
    reason: 'payer lost the key',
    requestedBy: a.requestedBy,
    requestedAt: new Date(now - 60_000),
    expiresAt: new Date(now + 3_600_000),
    status: a.status ?? 'approved',
    decidedBy: a.decidedBy,
    decidedAt: new Date(now),
  };
  return h.db.prisma.operatorApproval.create({ data });
}

/** The service's fund return dependencies on the harness, for an operator's recovery made in-process. */
export function operatorReturnDeps(h: Harness): FundReturnDeps {
  return { prisma: h.db.prisma, custody: h.chain.addressBook, chains: h.chain.chains, engine: h.engine };
}
