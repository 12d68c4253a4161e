import { Context } from '@temporalio/activity';
import type { PrismaClient } from '../src/db/client';
import type { ChainRegistry } from '../src/chain/registry';
import type { DepositStart } from '../src/domain/engine/pure/engine';
import { verifyIncomingTransfer } from '../src/domain/chain/incoming-transfers';
import type { ResolutionRequest } from '../src/domain/operators/pure/operator-resolution';
import type { DepositEventName } from '../src/domain/deposits/pure/deposit-machine';
import type { PersistedDepositState, PersistedDepositTransition } from '../src/domain/deposits/pure/deposit-serde';
import { depositsToReconcile, reconcileDeposit } from '../src/domain/deposits/deposit-reconciliation';
import { recordManualDepositPayout, replaceStuckDepositLegs, sendDepositSettlement } from '../src/domain/deposits/deposit-settlement';
import { checkSettlement, liveNetTxHash } from '../src/domain/settlement/settlement-legs';
import {
  dataHoldFrom,
  persistDepositTransition,
  recordDepositDetected,
  recordDepositResolution,
} from '../src/domain/deposits/deposit-store';
import type { SettlementSenderDeps } from '../src/domain/settlement/settlement-sender';
import { closeUnrecordedHold, holdUnrecordedDeposit } from '../src/domain/deposits/deposit-unrecorded';
import type { Logger } from '../src/logger';
import {
  endsPass,
  passBegan,
  passEndsAfter,
  passFindings,
  passFinished,
  passFound,
  type PassRef,
} from '../src/domain/monitoring/reconciliation-runs';
import { currentPass } from './reconciliation';
import { dataErrorState } from './failures';

export interface DepositActivityDeps {
  prisma: PrismaClient;
  chains: ChainRegistry;
  settlement: SettlementSenderDeps;
  logger: Logger;
}

const RUN = 'deposit-reconciliation';

/** A deposit pass's discrepancies: the deposits it reversed (a reorg took their transfer away). */
async function finishDepositPass(prisma: PrismaClient, pass: PassRef): Promise<void> {
  const reversed = (await passFindings(prisma, RUN, pass)).length;
  await passFinished(prisma, RUN, pass, { discrepancies: reversed, counts: { reversed } });
}

/** The DepositWorkflow's (and reconciliation's) side effects; each is idempotent, each one call into the domain. */
export function createDepositActivities(deps: DepositActivityDeps) {
  const { prisma, chains } = deps;
  return {
    recordDepositDetected: async (
      input: DepositStart,
      initial: { state: PersistedDepositState; events: DepositEventName[]; at: string },
    ) => {
      // Deposits started before ordinals have none in their input (their rows exist already).
      const start = { ...input, ordinal: input.ordinal ?? 0 };
      const workflowId = Context.current().info.workflowExecution?.workflowId ?? '';
      try {
        return await recordDepositDetected(prisma, start, initial, workflowId);
      } catch (err) {
        // The row itself was refused for its data: with no row to hold, its alert is the hold, raised
        // before this attempt reports the failure (a failed raise retries the whole attempt).
        const sqlState = dataErrorState(err);
        if (sqlState) await holdUnrecordedDeposit({ prisma, logger: deps.logger }, start, workflowId, sqlState);
        throw err;
      }
    },

    /** An operator gave up a deposit whose row was refused: its hold closes with who and why. */
    failUnrecordedDeposit: (input: { depositId: string; actor: string; reason: string | null }) =>
      closeUnrecordedHold(prisma, input.depositId, { action: 'fail', actor: input.actor, reason: input.reason }),

    persistDepositTransition: (depositId: string, t: PersistedDepositTransition) => persistDepositTransition(prisma, depositId, t),

    recordDepositResolution: (input: ResolutionRequest & { id: string; depositId: string }) => recordDepositResolution(prisma, input),

    /** Where a data hold stood, for a run that did not see it happen. */
    depositDataHoldFrom: (input: { depositId: string }) => dataHoldFrom(prisma, input.depositId),

    /** Re-reads the source transfer at the confirmation depth; one no longer in the canonical chain is dropped. */
    verifyDepositSource: (input: {
      chainId: number;
      txHash: string;
      logIndex: number;
      ordinal?: number;
      tokenAddress: string;
      toAddress: string;
      confirmations: number;
    }) => verifyIncomingTransfer(chains.get(input.chainId), { ...input, token: input.tokenAddress, to: input.toAddress }),

    /** An operator's hand-made payout (mark-settled), checked on chain and recorded as the net leg. */
    recordManualDepositPayout: (input: { depositId: string; txHash: string }) =>
      recordManualDepositPayout(deps, input.depositId, input.txHash),

    broadcastDepositSettlement: (input: { depositId: string }) => sendDepositSettlement(deps.settlement, input.depositId),

    /** The net leg's mined transaction (a fee replacement's when that one was mined). */
    depositSettlementTxHash: (input: { depositId: string }) => liveNetTxHash(deps.prisma, { type: 'deposit', id: input.depositId }),

    /** Replaces a leg stuck under a rising base fee (within the cap), then re-reads every leg at depth. */
    async checkDepositSettlement(input: { depositId: string; confirmations: number }) {
      await replaceStuckDepositLegs(deps.settlement, input.depositId);
      return checkSettlement(deps, { type: 'deposit', id: input.depositId }, input.confirmations);
    },

    // A deposit pass has no closing activity: its first listing begins it, its last (a short page)
    // names the deposit whose reconcileDeposit ends it, or ends it when there is none.
    async listDepositsToReconcile(input: { settledSince: string; afterId?: string; limit: number }) {
      const pass = currentPass();
      if (!input.afterId) await passBegan(prisma, RUN, pass);
      const ids = await depositsToReconcile(prisma, input);
      if (ids.length < input.limit) {
        if (ids.length === 0) await finishDepositPass(prisma, pass);
        else await passEndsAfter(prisma, RUN, pass, ids[ids.length - 1]!);
      }
      return ids;
    },

    async reconcileDeposit(input: { depositId: string; at: string }) {
      const pass = currentPass();
      const outcome = await reconcileDeposit(deps, input.depositId, input.at);
      if (outcome === 'reversed') await passFound(prisma, RUN, pass, [input.depositId]);
      if (await endsPass(prisma, RUN, pass, input.depositId)) await finishDepositPass(prisma, pass);
      return outcome;
    },
  };
}

export type DepositActivities = ReturnType<typeof createDepositActivities>;
