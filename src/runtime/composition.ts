import { createServiceMetrics } from '../http/metrics';
import type { ServiceConfig } from '../config';
import type { TEnvironments } from '../config/environments';
import type { Logger } from '../logger';
import type { Database } from '../db/client';
import type { ChainRegistry } from '../chain/registry';
import type { AddressBook, Custody } from '../custody';
import type { OfframpProvider, Payout } from '../offramp/offramp-provider';
import type { TemporalGateway } from '../temporal/gateway';
import type { ApiDeps } from '../http/app';
import { appCredentialCache, type AppCredentialCache } from '../domain/apps/apps';
import type { ServiceSecret } from '../domain/keys/service-keys';
import type { OfframpCallbackDeps } from '../domain/bank-accounts/provider-callbacks';
import { onPayoutUpdated } from '../domain/payments/payment-payouts';
import { onProviderBankAccountUpdated } from '../domain/bank-accounts/bank-accounts';
import { createActivities, type ActivityDeps, type Activities } from '../../activities';
import { deliveringEnvironments } from '../domain/webhooks/webhooks-module';
import { followCredentialChanges } from './credential-changes';
import type { ChannelListener } from '../db/listener';

/** What every process of the service is built from: its configuration and what was started for it. */
export interface ServiceParts {
  config: ServiceConfig;
  environments: TEnvironments;
  logger: Logger;
  serviceSecret: ServiceSecret;
  chains: ChainRegistry;
  /** Addresses only: the API signs nothing, also when the worker shares its process. */
  addressBook: AddressBook;
  engine: TemporalGateway;
  /** The off-ramp provider (bank payouts): an outside one or the sandbox provider. Absent: none. */
  offramp?: OfframpProvider;
}

export type OfframpCallbacks = Pick<OfframpCallbackDeps, 'onPayoutUpdated' | 'onBankAccountUpdated'>;

/**
 * What a caller may change, by name, and nothing else: the test harness and the simulation build
 * the same service as `npm start`, so a wiring defect shows in their runs too.
 */
export interface ServiceOverrides {
  /** Wraps the handlers the provider's verified callbacks reach (tests observe them, or put their own in). */
  offrampCallbacks?(service: OfframpCallbacks): OfframpCallbacks;
  /** The webhook retry waits (tests: short ones); default the contract's schedule. */
  webhookRetryBackoffMs?: ActivityDeps['webhookRetryBackoffMs'];
}

/** What the API of a process needs beyond the parts: its own pool, and what runs beside it. */
export interface ApiPlacement {
  db: Database;
  credentials?: AppCredentialCache;
  /** The worker runtime's Prometheus endpoint, when the worker runs in this process. */
  temporalMetricsUrl?: string;
  /** The Temporal Web UI the operator console links workflows to. */
  temporalUiUrl?: string;
}

/** What the worker of a process needs beyond the parts: its own pool, the signer, its delivery starter. */
export interface WorkerPlacement {
  db: Database;
  custody: Custody;
  /** Starts delivery workflows eagerly on the worker's own connection (default: the gateway). */
  webhookStarter?: Pick<TemporalGateway, 'startWebhookDelivery'>;
}

/** Where an API process's credential cache reads, and the database whose NOTIFYs it follows. */
export interface CredentialsPlacement {
  db: Database;
  databaseUrl: string;
}

/** The cache and its NOTIFY listener: the caller registers `stop`, then awaits `ready` before serving. */
export interface FollowedCredentials extends ChannelListener {
  credentials: AppCredentialCache;
}

export interface ComposedService {
  api(placement: ApiPlacement): ApiDeps;
  /** The API's app-credential cache, kept honest by the NOTIFYs of each rotation or revocation. */
  credentials(placement: CredentialsPlacement): FollowedCredentials;
  activities(placement: WorkerPlacement): Activities;
}

/** The one place the service is wired: `npm start`'s roles, the test harness and the simulation all build it here. */
export function composeService(parts: ServiceParts, overrides: ServiceOverrides = {}): ComposedService {
  const { config, environments, logger, serviceSecret, chains, engine } = parts;
  return {
    api(placement) {
      const offramp = parts.offramp ? { provider: parts.offramp, ...offrampCallbacks(parts, placement.db, overrides) } : undefined;
      return {
        config,
        environments,
        db: placement.db,
        logger,
        serviceSecret,
        ...(placement.credentials ? { credentials: placement.credentials } : {}),
        engine,
        custody: parts.addressBook,
        chains,
        temporalHealth: () => engine.ping(),
        client: { engine },
        returns: engine,
        ...(placement.temporalMetricsUrl ? { metrics: { temporalMetricsUrl: placement.temporalMetricsUrl } } : {}),
        // Counted only where a scraper can read them (METRICS_TOKEN on the admin listener).
        ...(config.admin.metricsToken
          ? {
              serviceMetrics: createServiceMetrics({
                prisma: placement.db.prisma,
                chains,
                temporalMetricsUrl: placement.temporalMetricsUrl,
              }),
            }
          : {}),
        operator: { engine, temporalUiUrl: config.temporal.uiUrl ?? placement.temporalUiUrl },
        ...(offramp ? { offramp } : {}),
      };
    },
    credentials(placement) {
      return followedCredentials(parts, placement);
    },
    activities(placement) {
      return createActivities({
        db: placement.db,
        logger,
        chains,
        custody: placement.custody,
        engine: placement.webhookStarter ? { ...engine, ...placement.webhookStarter } : engine,
        serviceSecret,
        webhooks: config.webhooks,
        webhookEnvironments: deliveringEnvironments(environments),
        ...(parts.offramp ? { offramp: parts.offramp } : {}),
        ...(overrides.webhookRetryBackoffMs ? { webhookRetryBackoffMs: overrides.webhookRetryBackoffMs } : {}),
      });
    },
  };
}

/** Credentials are cached per process; a rotation or revocation reaches the cache through a NOTIFY. */
function followedCredentials(parts: ServiceParts, placement: CredentialsPlacement): FollowedCredentials {
  const credentials = appCredentialCache(placement.db.prisma, (parts.config.auth?.cacheSeconds ?? 0) * 1000);
  const changes = followCredentialChanges({ url: placement.databaseUrl, cache: credentials, logger: parts.logger });
  return { credentials, ready: changes.ready, stop: () => changes.stop() };
}

/** A callback names a payout or account; the provider's answer to a read of it is applied (provider-callbacks.ts). */
function offrampCallbacks(parts: ServiceParts, db: Database, overrides: ServiceOverrides): OfframpCallbacks {
  const service: OfframpCallbacks = {
    onBankAccountUpdated: onProviderBankAccountUpdated(db.prisma),
    onPayoutUpdated: async (payout: Payout) => {
      await onPayoutUpdated(
        { prisma: db.prisma, engine: parts.engine, confirmationsOf: (chainId) => parts.chains.network(chainId).confirmations },
        payout,
      );
    },
  };
  return overrides.offrampCallbacks ? overrides.offrampCallbacks(service) : service;
}
