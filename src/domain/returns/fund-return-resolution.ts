import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { FundReturnEngine } from '../engine/pure/engine';
import { ApiError, notFound } from '../requests/errors';
import { isHeld, type ResolutionRequest } from '../operators/pure/operator-resolution';
import { payoutProblem, recordManualNetLeg, requirePayout, type ExpectedPayout } from '../settlement/manual-payout';
import { confirmFundReturn, load, move, sourceOf, type ReturnState } from './fund-return-transfer';
import type { FundReturnRow } from './fund-returns';

/**
 * An operator's release of a requires_intervention refund or incident recovery, as for Payments and
 * deposits (src/domain/operators/operator-actions.ts is the one way in): checked here, then signalled to the
 * return's FundReturnWorkflow, which applies it (applyFundReturnResolution).
 */

/** What a hand-made payout of the return must be: its amount of its token, from its payer to its destination. */
function expectedReturnPayout(r: FundReturnRow, confirmations: number): ExpectedPayout {
  return {
    chainId: r.chainId,
    token: r.tokenAddress,
    from: r.fromAddress,
    to: r.toAddress,
    amountAtomic: BigInt(r.amountAtomic.toFixed()),
    confirmations,
  };
}

/** Refused unless held; a hand-made payout (mark-settled) is checked against the chain first. */
export async function resolveFundReturn(
  deps: { prisma: PrismaClient; chains: Pick<ChainRegistry, 'get' | 'network'> },
  engine: Pick<FundReturnEngine, 'resolveFundReturn'>,
  returnId: string,
  request: ResolutionRequest,
) {
  const r = await deps.prisma.fundReturn.findUnique({ where: { id: returnId } });
  if (!r) throw notFound('Fund return');
  if (!isHeld({ kind: 'fund_return', status: r.status })) {
    throw new ApiError('conflict', `${r.kind.replace('_', ' ')} ${returnId} is not held (status ${r.status})`);
  }
  const confirmations = deps.chains.network(r.chainId).confirmations;
  if (request.action === 'mark-settled') {
    await requirePayout(deps, sourceOf(r), request.txHash ?? '', expectedReturnPayout(r, confirmations));
  }
  await engine.resolveFundReturn(returnId, confirmations, request);
  return { fundReturnId: returnId, action: request.action, signalled: true };
}

/**
 * The workflow's side of a resolution. retry: pending again (the workflow sends it again); fail: failed
 * (the amount is free again: a new return may be asked for); mark-settled: the operator's payout,
 * checked on chain again, is recorded as the net leg and the return confirmed and posted with its
 * hash. Not held (a repeated signal) or a payout that does not check: unchanged.
 */
export async function applyFundReturnResolution(
  deps: { prisma: PrismaClient; chains: Pick<ChainRegistry, 'get'> },
  id: string,
  request: ResolutionRequest & { confirmations: number },
): Promise<ReturnState> {
  const { r, payment } = await load(deps.prisma, id);
  if (r.status !== 'requires_intervention') return { status: r.status as ReturnState['status'] };
  if (request.action === 'retry') return move(deps.prisma, r, { status: 'pending', failureReason: null });
  if (request.action === 'fail') return move(deps.prisma, r, { status: 'failed', failureReason: request.reason ?? 'operator_failed' });
  const txHash = (request.txHash ?? '').toLowerCase();
  const expected = expectedReturnPayout(r, request.confirmations);
  if (await payoutProblem(deps.chains, txHash, expected)) return { status: 'requires_intervention' };
  await recordManualNetLeg(deps.prisma, sourceOf(r), txHash, expected);
  return confirmFundReturn(deps.prisma, r, payment, { transactionHash: txHash });
}
