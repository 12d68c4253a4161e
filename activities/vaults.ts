import type { PrismaClient } from '../src/db/client';
import type { ChainRegistry } from '../src/chain/registry';
import type { SettlementSenderDeps } from '../src/domain/settlement/settlement-sender';
import { checkVaultFunding, failVaultFunding, replaceStuckFundingLeg, sendVaultFunding } from '../src/domain/vaults/vault-funding-transfer';

export interface VaultActivityDeps {
  prisma: PrismaClient;
  chains: ChainRegistry;
  settlement: SettlementSenderDeps;
}

/**
 * The vault funding leg's side effects, for the PaymentWorkflow's fundFromVault signal. Each is
 * idempotent on the funding operation (its id keys the settlement leg), one call into the domain.
 */
export function createVaultActivities(deps: VaultActivityDeps) {
  return {
    sendVaultFunding: (input: { fundingOperationId: string }) => sendVaultFunding(deps.settlement, input.fundingOperationId),
    /** Replaces the leg when it is stuck under a rising base fee (within the cap), then re-reads it at depth. */
    async checkVaultFunding(input: { fundingOperationId: string; confirmations: number }) {
      await replaceStuckFundingLeg(deps.settlement, input.fundingOperationId);
      return checkVaultFunding(deps, input.fundingOperationId, input.confirmations);
    },
    failVaultFunding: (input: { fundingOperationId: string; reason: string }) =>
      failVaultFunding(deps.prisma, input.fundingOperationId, input.reason),
  };
}

export type VaultActivities = ReturnType<typeof createVaultActivities>;
