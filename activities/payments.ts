import type { PrismaClient } from '../src/db/client';
import type { ChainRegistry } from '../src/chain/registry';
import { parseTransferKey } from '../src/chain/transfer-key';
import { verifyIncomingTransfer, type TransferOutcome } from '../src/domain/chain/incoming-transfers';
import type { ResolutionRequest } from '../src/domain/operators/pure/operator-resolution';
import type { PersistedTransition } from '../src/domain/payments/pure/payment-serde';
import { recordManualPaymentPayout, replaceStuckPaymentLegs, sendPaymentSettlement } from '../src/domain/payments/payment-settlement';
import { checkSettlement, liveNetTxHash } from '../src/domain/settlement/settlement-legs';
import { loadPaymentState, persistPaymentTransition, recordPaymentResolution } from '../src/domain/payments/payment-store';
import type { SettlementSenderDeps } from '../src/domain/settlement/settlement-sender';
import type { OfframpProvider } from '../src/offramp/offramp-provider';
import { readPayout, requestPayout } from '../src/domain/payments/payment-payouts';
import { scannedThrough } from '../src/domain/chain/chain-scan-cursors';
import { currentStepId } from './step-id';

export interface PaymentActivityDeps {
  prisma: PrismaClient;
  chains: ChainRegistry;
  settlement: SettlementSenderDeps;
  /** The off-ramp provider (bank Payments' payouts); absent: a payout call retries until one is configured. */
  offramp?: OfframpProvider;
}

/** The PaymentWorkflow's side effects; each is idempotent, and each is one call into the domain. */
export function createPaymentActivities(deps: PaymentActivityDeps) {
  const { prisma, chains } = deps;
  return {
    persistPaymentTransition: (paymentId: string, t: PersistedTransition) =>
      persistPaymentTransition(prisma, paymentId, t, currentStepId()),

    loadPaymentState: (paymentId: string) => loadPaymentState(prisma, paymentId),

    recordPaymentResolution: (input: ResolutionRequest & { id: string; paymentId: string }) => recordPaymentResolution(prisma, input),

    /** Re-reads each pending transfer at the confirmation depth; one that left the canonical chain is dropped. */
    async verifyPaymentTransfers(input: { chainId: number; token: string; to: string; confirmations: number; transfers: string[] }) {
      const chain = chains.get(input.chainId);
      const results: Array<{ key: string; outcome: TransferOutcome }> = [];
      for (const key of input.transfers) {
        const { txHash, ordinal, logIndex } = parseTransferKey(key);
        results.push({
          key,
          outcome: await verifyIncomingTransfer(chain, {
            txHash,
            ordinal,
            logIndex,
            token: input.token,
            to: input.to,
            confirmations: input.confirmations,
          }),
        });
      }
      return results;
    },

    /**
     * Whether the scanner has read the network through `block`, the head when the Payment's expiry
     * came (read here the first time, when `block` is null): a payer who paid before expiresAt is
     * seen before the Payment expires, however far the scanner is behind.
     */
    async chainReadThrough(input: { chainId: number; block: string | null }): Promise<{ block: string; read: boolean }> {
      const block = input.block === null ? await chains.get(input.chainId).getBlockNumber() : BigInt(input.block);
      return { block: block.toString(), read: await scannedThrough(prisma, input.chainId, block) };
    },

    /** An operator's hand-made payout (mark-settled), checked on chain and recorded as the net leg. */
    recordManualPayout: (input: { paymentId: string; txHash: string }) => recordManualPaymentPayout(deps, input.paymentId, input.txHash),

    broadcastSettlement: (input: { paymentId: string }) => sendPaymentSettlement(deps.settlement, input.paymentId),

    /** A bank Payment's payout at the provider (idempotent: keyed by the Payment id). */
    requestPayout: (input: { paymentId: string }) => requestPayout(deps, input.paymentId),

    readPayout: (input: { paymentId: string }) => readPayout(deps, input.paymentId),

    /** The net leg's mined transaction (a fee replacement's when that one was mined). */
    settlementTxHash: (input: { paymentId: string }) => liveNetTxHash(prisma, { type: 'payment', id: input.paymentId }),

    /** Replaces a leg stuck under a rising base fee (within the cap), then re-reads every leg at depth. */
    async checkSettlement(input: { paymentId: string; confirmations: number }) {
      await replaceStuckPaymentLegs(deps.settlement, input.paymentId);
      return checkSettlement(deps, { type: 'payment', id: input.paymentId }, input.confirmations);
    },
  };
}

export type PaymentActivities = ReturnType<typeof createPaymentActivities>;
