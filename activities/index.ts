import type { Client } from '@temporalio/client';
import type { Database } from '../src/db/client';
import type { ChainRegistry } from '../src/chain/registry';
import type { Custody } from '../src/custody';
import type { Logger } from '../src/logger';
import { createChainScannerActivities, type TransferHandler } from './chain-scanner';
import { createPaymentActivities, type TreasuryPolicy } from './payments';
import { createDepositActivities, createDepositTransferHandler } from './deposits';
import { createWebhookActivities } from './webhooks';

export interface ActivityDeps {
  db: Database;
  logger: Logger;
  chains: ChainRegistry;
  custody: Custody;
  /** Activities that hand work to other workflows (the chain scanner signals Payments). */
  temporal: Client;
  treasury: TreasuryPolicy;
  serviceSecret: string;
  /** Extra owners of watched chain addresses, e.g. deposit addresses. */
  transferHandlers?: TransferHandler[];
  /** Webhook destination policy (config.webhooks); absent means private destinations are refused. */
  webhooks?: { allowPrivateDestinations: boolean };
}

export const DEFAULT_TREASURY_POLICY: TreasuryPolicy = {
  minGasWei: 5_000_000_000_000_000n, // 0.005 ETH
  topUpWei: 10_000_000_000_000_000n, // 0.01 ETH
};

/** All activities, each feature's from its own factory, with dependencies injected. */
export function createActivities(deps: ActivityDeps) {
  const prisma = deps.db.prisma;
  return {
    ...createPaymentActivities({ prisma, chains: deps.chains, custody: deps.custody, treasury: deps.treasury }),
    ...createChainScannerActivities({
      prisma,
      chains: deps.chains,
      temporal: deps.temporal,
      transferHandlers: [...(deps.transferHandlers ?? []), createDepositTransferHandler({ prisma, chains: deps.chains, temporal: deps.temporal })],
    }),
    ...createDepositActivities({ prisma, chains: deps.chains, custody: deps.custody, treasury: deps.treasury }),
    ...createWebhookActivities({ prisma, logger: deps.logger, serviceSecret: deps.serviceSecret, destinations: deps.webhooks, temporal: deps.temporal }),
  };
}

export type Activities = ReturnType<typeof createActivities>;
