import type { Database } from '../src/db/client';
import type { ChainRegistry } from '../src/chain/registry';
import type { Custody } from '../src/custody';
import type {
  ChainAdvanceEngine,
  DepositEngine,
  FundReturnEngine,
  PaymentEngine,
  VaultFundingEngine,
  WebhookEngine,
} from '../src/domain/engine/pure/engine';
import type { Logger } from '../src/logger';
import type { OfframpProvider } from '../src/offramp/offramp-provider';
import { createChainScannerActivities } from './chain-scanner';
import { classifiedActivities } from './failures';
import { withCrashPoints } from './crash-points';
import { createDepositActivities } from './deposits';
import { createPaymentActivities } from './payments';
import { createReconciliationActivities } from './reconciliation';
import { createWebhookActivities } from './webhooks';
import { createVaultActivities } from './vaults';
import { createFundReturnActivities } from './fund-returns';
import type { ServiceSecret } from '../src/domain/keys/service-keys';

export interface ActivityDeps {
  db: Database;
  logger: Logger;
  chains: ChainRegistry;
  custody: Custody;
  /**
   * Activities that hand work to other workflows (the scanner signals Payments, starts deposits; the
   * orphan reconciler starts Payments, fund returns and vault funding left unstarted).
   */
  engine: Pick<PaymentEngine, 'transferSeen' | 'startPayment' | 'paymentWorkflowState'> &
    Pick<DepositEngine, 'startDeposit'> &
    Pick<WebhookEngine, 'startWebhookDelivery'> &
    VaultFundingEngine &
    FundReturnEngine &
    ChainAdvanceEngine;
  serviceSecret: ServiceSecret;
  /** The off-ramp provider (bank payouts); absent: bank Payments' payout calls retry until one is. */
  offramp?: OfframpProvider;
  /** Webhook destination policy (config.webhooks); absent means private destinations are refused. */
  webhooks?: { allowPrivateDestinations: boolean };
  /** Tests only: the webhook retry waits (WebhookAttemptDeps.retryBackoffMs). */
  webhookRetryBackoffMs?: () => readonly number[];
  /** The environments whose apps get deliveries (WebhookActivityDeps.deliversIn). */
  webhookEnvironments?: readonly string[];
}

/**
 * All activities, each feature's from its own factory, with dependencies injected, and every one
 * wrapped in the one error classification (activities/failures.ts), so none can forget it. The chain
 * scanner and the webhook dispatcher are long-lived singletons: a data error there keeps retrying
 * (with backoff) instead of stopping detection or delivery for every partner.
 */
export function createActivities(deps: ActivityDeps) {
  const prisma = deps.db.prisma;
  const settlement = { prisma, chains: deps.chains, custody: deps.custody, logger: deps.logger };
  const { dispatchWebhookEvents, ...webhookDelivery } = createWebhookActivities({
    prisma,
    logger: deps.logger,
    serviceSecret: deps.serviceSecret,
    destinations: deps.webhooks,
    engine: deps.engine,
    ...(deps.webhookRetryBackoffMs ? { retryBackoffMs: deps.webhookRetryBackoffMs } : {}),
    ...(deps.webhookEnvironments ? { deliversIn: deps.webhookEnvironments } : {}),
  });
  return withCrashPoints({
    ...classifiedActivities(createPaymentActivities({ prisma, chains: deps.chains, settlement, offramp: deps.offramp })),
    ...classifiedActivities(createDepositActivities({ prisma, chains: deps.chains, settlement, logger: deps.logger })),
    ...classifiedActivities(createVaultActivities({ prisma, chains: deps.chains, settlement })),
    ...classifiedActivities(createFundReturnActivities({ prisma, chains: deps.chains, settlement })),
    ...classifiedActivities(createChainScannerActivities({ prisma, chains: deps.chains, custody: deps.custody, engine: deps.engine }), {
      retryDataErrors: true,
    }),
    ...classifiedActivities(
      createReconciliationActivities({
        prisma,
        chains: deps.chains,
        custody: deps.custody,
        engine: deps.engine,
        logger: deps.logger,
        settlement,
      }),
    ),
    ...classifiedActivities(webhookDelivery),
    ...classifiedActivities({ dispatchWebhookEvents }, { retryDataErrors: true }),
  });
}

export type Activities = ReturnType<typeof createActivities>;
