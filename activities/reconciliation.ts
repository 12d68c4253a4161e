import { Context } from '@temporalio/activity';
import type { PrismaClient } from '../src/db/client';
import type { ChainRegistry } from '../src/chain/registry';
import type { Custody } from '../src/custody';
import type { FundReturnEngine, PaymentEngine, VaultFundingEngine } from '../src/domain/engine/pure/engine';
import { reconcileLedgerAddresses, reconcileLedgerPage, syncLedgerAlerts, type BooksDifference } from '../src/domain/ledger/reconcile';
import { reconcilePaymentWorkflows } from '../src/domain/payments/payment-workflows';
import { sweepDust } from '../src/domain/payments/dust';
import { followVaultReceipts } from '../src/domain/vaults/vault-receipts';
import { followVaultFunding } from '../src/domain/vaults/vault-funding-recovery';
import { startOrphanFundReturns } from '../src/domain/returns/fund-return-workflows';
import { redeliverSettlements } from '../src/domain/payments/payment-redelivery';
import type { SettlementSenderDeps } from '../src/domain/settlement/settlement-sender';
import type { Logger } from '../src/logger';
import { openAlertsOf, passBegan, passFinished, type PassRef } from '../src/domain/monitoring/reconciliation-runs';

export interface ReconciliationActivityDeps {
  prisma: PrismaClient;
  chains: ChainRegistry;
  custody: Custody;
  /** The orphan reconciler starts Payment workflows (and hands them their transfers) and fund returns' workflows; the vault pass, funding workflows. */
  engine: Pick<PaymentEngine, 'startPayment' | 'paymentWorkflowState'> & Pick<FundReturnEngine, 'startFundReturn'> & VaultFundingEngine;
  logger: Logger;
  /** The one settlement sender's deps: the pass delivers again a posted settlement a reorg took off the chain. */
  settlement: SettlementSenderDeps;
}

/** The pass (workflow run) the running activity belongs to. */
export function currentPass(): PassRef {
  const run = Context.current().info.workflowExecution;
  if (!run) throw new Error('a reconciliation activity runs in a workflow');
  return { workflowId: run.workflowId, runId: run.runId };
}

/** What a workflow keeps of one look at the books: counts and differences, not every amount in flight. */
export interface LedgerLook {
  checked: number;
  inFlight: number;
  differences: BooksDifference[];
}

/** The reconciliation workflows' side effects: reads, alerts and workflow starts, each one call into the domain. */
export function createReconciliationActivities(deps: ReconciliationActivityDeps) {
  const ledger = { prisma: deps.prisma, chains: deps.chains, custody: deps.custody };
  const look = (r: { checked: number; inFlight: unknown[]; differences: BooksDifference[] }): LedgerLook => ({
    checked: r.checked,
    inFlight: r.inFlight.length,
    differences: r.differences,
  });
  return {
    async reconcileLedgerPage(input: { afterAddress: string | null; limit: number }): Promise<LedgerLook & { next: string | null }> {
      if (input.afterAddress === null) await passBegan(deps.prisma, 'ledger-reconciliation', currentPass());
      const page = await reconcileLedgerPage(ledger, input);
      return { ...look(page), next: page.next };
    },

    async reconcileLedgerAddresses(input: { addresses: string[] }): Promise<LedgerLook> {
      return look(await reconcileLedgerAddresses(ledger, input.addresses));
    },

    /** The end of a ledger pass: its alerts made those of what it found, and the pass recorded. */
    async syncLedgerAlerts(input: { differences: BooksDifference[] }) {
      const alerts = await syncLedgerAlerts({ prisma: deps.prisma, logger: deps.logger }, input.differences);
      await passFinished(deps.prisma, 'ledger-reconciliation', currentPass(), {
        discrepancies: input.differences.length,
        counts: { differences: input.differences.length, alertsRaised: alerts.raised, alertsResolved: alerts.resolved },
      });
      return alerts;
    },

    /**
     * One batch of the orphan Payment reconciler. The first batch of a pass also starts the workflow of
     * every orphaned fund return (its result unchanged, so the pass's workflow code is too).
     */
    async reconcilePaymentWorkflows(input: { graceSeconds: number; cutoff?: string; afterId: string | null; limit: number }) {
      if (!input.afterId) await passBegan(deps.prisma, 'payment-reconciliation', currentPass());
      const batch = await reconcilePaymentWorkflows(
        { prisma: deps.prisma, chains: deps.chains, engine: deps.engine, logger: deps.logger },
        input,
      );
      if (!input.afterId)
        await startOrphanFundReturns(
          { prisma: deps.prisma, chains: deps.chains, engine: deps.engine, logger: deps.logger },
          { graceSeconds: input.graceSeconds, limit: input.limit },
        );
      return batch;
    },

    sweepDust: (input: { limit: number }) => sweepDust({ prisma: deps.prisma, chains: deps.chains }, input),

    // The vaults' money the pass follows: receipts into them, and funding out of them that no workflow follows
    // (one activity, so the reconciliation workflow's history is unchanged).
    async followVaultReceipts(input: { limit: number }) {
      const receipts = await followVaultReceipts({ prisma: deps.prisma, chains: deps.chains }, input);
      return { ...receipts, funding: await followVaultFunding({ prisma: deps.prisma, chains: deps.chains, engine: deps.engine }, input) };
    },

    /**
     * The last activity of a Payment pass: posted settlements re-read, then the pass recorded. Its
     * discrepancies are the open alerts it owns (Payments without a workflow, settlements dropped).
     */
    async redeliverSettlements(input: { limit: number }) {
      const settlements = await redeliverSettlements(
        { settlement: deps.settlement, logger: deps.logger, confirmations: (chainId) => deps.chains.network(chainId).confirmations },
        input,
      );
      const open = await openAlertsOf(deps.prisma, 'payment-reconciliation');
      await passFinished(deps.prisma, 'payment-reconciliation', currentPass(), {
        discrepancies: Object.values(open).reduce((a, b) => a + b, 0),
        counts: {
          ...open,
          settlementsChecked: settlements.checked,
          settlementsResent: settlements.resent.length,
          settlementsHeld: settlements.held.length,
        },
      });
      return settlements;
    },
  };
}

export type ReconciliationActivities = ReturnType<typeof createReconciliationActivities>;
