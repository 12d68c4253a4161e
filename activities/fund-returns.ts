import type { PrismaClient } from '../src/db/client';
import type { ChainRegistry } from '../src/chain/registry';
import type { SettlementSenderDeps } from '../src/domain/settlement/settlement-sender';
import type { ResolutionRequest } from '../src/domain/operators/pure/operator-resolution';
import { checkFundReturn, failFundReturn, replaceStuckReturnLeg, sendFundReturn } from '../src/domain/returns/fund-return-transfer';
import { applyFundReturnResolution } from '../src/domain/returns/fund-return-resolution';

export interface FundReturnActivityDeps {
  prisma: PrismaClient;
  chains: ChainRegistry;
  settlement: SettlementSenderDeps;
}

/** The FundReturnWorkflow's side effects, each idempotent on the return (its id keys the settlement leg). */
export function createFundReturnActivities(deps: FundReturnActivityDeps) {
  return {
    sendFundReturn: (input: { returnId: string }) => sendFundReturn(deps.settlement, input.returnId),
    /** Replaces the leg when it is stuck under a rising base fee (within the cap), then re-reads it at depth. */
    async checkFundReturn(input: { returnId: string; confirmations: number }) {
      await replaceStuckReturnLeg(deps.settlement, input.returnId);
      return checkFundReturn(deps, input.returnId, input.confirmations);
    },
    failFundReturn: (input: { returnId: string; reason: string }) => failFundReturn(deps.prisma, input.returnId, input.reason),
    /** An operator's resolution of a held return (its audit row was written when it was asked for). */
    resolveFundReturn: ({ returnId, ...request }: ResolutionRequest & { returnId: string; confirmations: number }) =>
      applyFundReturnResolution(deps, returnId, request),
  };
}

export type FundReturnActivities = ReturnType<typeof createFundReturnActivities>;
