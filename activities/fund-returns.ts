import type { PrismaClient } from '../src/db/client';
import type { ChainRegistry } from '../src/chain/registry';
import type { SettlementSenderDeps } from '../src/domain/settlement/settlement-sender';
import { checkFundReturn, failFundReturn, sendFundReturn } from '../src/domain/returns/fund-return-transfer';

export interface FundReturnActivityDeps {
  prisma: PrismaClient;
  chains: ChainRegistry;
  settlement: SettlementSenderDeps;
}

/** The FundReturnWorkflow's side effects, each idempotent on the return (its id keys the settlement leg). */
export function createFundReturnActivities(deps: FundReturnActivityDeps) {
  return {
    sendFundReturn: (input: { returnId: string }) => sendFundReturn(deps.settlement, input.returnId),
    checkFundReturn: (input: { returnId: string; confirmations: number }) => checkFundReturn(deps, input.returnId, input.confirmations),
    failFundReturn: (input: { returnId: string; reason: string }) => failFundReturn(deps.prisma, input.returnId, input.reason),
  };
}

export type FundReturnActivities = ReturnType<typeof createFundReturnActivities>;
