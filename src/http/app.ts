import type { Server } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import type { Database } from '../db/client';
import type { TEnvironments } from '../config/environments';
import type { ServiceConfig } from '../config';
import { defaultAdmission } from '../config';
import type { Logger } from '../logger';
import type { ApiState } from './context';
import { authenticate } from './middleware/auth';
import { authenticateApp, type AppCredentialCache } from '../domain/apps/apps';
import { idempotencyRecords } from '../domain/requests/idempotency-records';
import { errorHandler } from './middleware/error-handler';
import { discardBody, jsonBody } from './middleware/json-body';
import { failedCredentialLimit, rateLimit } from './middleware/rate-limit';
import { transportSecurity } from './middleware/transport-security';
import { clientAddress } from './middleware/client-ip';
import { requestContext } from './middleware/request-context';
import { echoSvcVersion, enforceSvcVersion } from './middleware/versioning';
import { answerMalformedRequests } from './malformed-requests';
import { moduleRuntime } from './middleware/modules';
import type { ModuleRuntime } from '../domain/apps/modules';
import { mountRouter } from './mount-router';
import { createCursorCodec, type CursorCodec } from '../domain/requests/pagination';
import { registerAccountRoutes } from './routes/accounts';
import { registerHealthRoutes, type HealthProbe } from './routes/health';
import { registerPartnerConfigRoutes } from './routes/partner-config';
import { registerTransactionRoutes } from './routes/transactions';
import { registerIdempotencyKeyRoutes } from './routes/idempotency-keys';
import { registerSandboxRoutes } from './routes/sandbox';
import { registerEventRoutes } from './routes/events';
import { registerPaymentRoutes } from './routes/payments';
import { registerPublicPaymentRoutes } from './routes/public-payments';
import { registerDepositRoutes } from './routes/deposits';
import { registerCheckoutRoutes } from './routes/checkout';
import { registerDocsRoutes } from './routes/docs';
import { registerOpenApiRoutes } from './routes/openapi';
import { offeredValues } from './openapi/request-rules';
import { registerClientAuthRoutes, registerClientRoutes } from './routes/client';
import type { PaymentOptionProvider } from '../domain/payments/payment-options';
import { registerVaultRoutes } from './routes/vaults';
import { registerBankAccountRoutes } from './routes/bank-accounts';
import { registerProviderCallbackRoutes } from './routes/provider-callbacks';
import type { OfframpCallbackDeps } from '../domain/bank-accounts/provider-callbacks';
import { requestLog } from './middleware/request-log';
import { registerPartnerDashboard } from './dashboard/dashboard';
import { createSmtpMailer, type Mailer } from '../mail/mailer';
import { createChainRegistry, type ChainRegistry } from '../chain/registry';
import type { AddressBook } from '../custody';
import type { FundReturnEngine, OperatorEngine, PaymentEngine, VaultFundingEngine, WebhookEngine } from '../domain/engine/pure/engine';
import { registerFundReturnRoutes } from './routes/fund-returns';
import { httpMetrics } from './middleware/http-metrics';
import { admission, AdmissionGate } from './middleware/admission';
import { requestSpan } from './middleware/request-span';
import type { ServiceSecret } from '../domain/keys/service-keys';
import type { ServiceMetrics } from './metrics';

export interface ApiDeps {
  config: ServiceConfig;
  environments: TEnvironments;
  db: Database;
  logger: Logger;
  serviceSecret: ServiceSecret;
  /**
   * The process's credential cache, kept honest by the app_credentials NOTIFY
   * (src/runtime/credential-changes.ts). Absent: every request reads the app from PostgreSQL.
   */
  credentials?: AppCredentialCache;
  temporalHealth: HealthProbe;
  /** The workflow engine (src/temporal/gateway.ts). Optional only for tests of the HTTP layer alone. */
  engine?: Pick<PaymentEngine, 'startPayment' | 'cancelPayment' | 'advancePaymentClock'> & Pick<WebhookEngine, 'kickWebhookDispatcher'>;
  /** Derives escrow and deposit addresses, and tells the service's own addresses from others. */
  custody: AddressBook;
  /** Chain clients (vault balances, client confirms); default: one per configured network of `environments`. */
  chains?: ChainRegistry;
  /** Outgoing mail; default: SMTP from config.mail when set, else none (the sandbox outbox). */
  mailer?: Mailer | null;
  /**
   * The client API (/v2/client/...): confirm reads the transactions clients name (through `chains`)
   * and hands them to Payments' workflows; extraOptions adds checkout options (the Vault option)
   * after the direct one. Absent: no client routes.
   */
  client?: { engine: Pick<PaymentEngine, 'transferSeen'> & VaultFundingEngine; extraOptions?: readonly PaymentOptionProvider[] };
  /** Sends refunds and incident recoveries (workflows/fund-return.ts). Absent: no refund or recovery routes. */
  returns?: Pick<FundReturnEngine, 'startFundReturn'>;
  /**
   * The off-ramp provider and what its verified callbacks update (bank accounts, payouts); it also
   * quotes bank Payments at creation. Absent: no POST /v2/providers/{providerCode}/callbacks, linking
   * a bank account answers 424, and bank payouts are refused.
   */
  offramp?: OfframpCallbackDeps;
  /** /metrics: the worker runtime's Prometheus endpoint when the worker runs in this process (its series are included). */
  metrics?: { temporalMetricsUrl?: string };
  /**
   * The service's Prometheus series, shared by the partner app (which counts its requests into them)
   * and the admin app (which serves them at /metrics with METRICS_TOKEN). Absent: nothing is counted.
   */
  serviceMetrics?: ServiceMetrics;
  /**
   * The admin plane's operator console at /console and hold releases: the resolve and recover signals
   * they send, and the Temporal Web UI the console links workflows to. Absent: neither.
   */
  operator?: { engine: OperatorEngine; temporalUiUrl?: string };
  /** Feature modules (payments, deposits, webhooks admin...) add their routes here. */
  extraRoutes?: Array<(router: Router<ApiState>, shared: SharedRouteDeps) => void>;
}

export interface SharedRouteDeps {
  cursors: CursorCodec;
}

/** The mail sign-in codes go out by: the one given, else SMTP when configured, else none (the sandbox outbox). */
export function mailerOf(deps: ApiDeps): Mailer | null {
  if (deps.mailer !== undefined) return deps.mailer;
  const smtpUrl = deps.config.mail?.smtpUrl;
  return smtpUrl ? createSmtpMailer({ smtpUrl, from: deps.config.mail!.from }) : null;
}

/** Serves the app on a server already bound (the test harness binds one before the app exists), as listen would. */
export function serveApi(server: Server, app: Koa<ApiState>, apiVersion: string): Server {
  server.on('request', app.callback());
  return answerMalformedRequests(server, apiVersion);
}

/** A Koa app whose every server (service, tests) answers what Node's parser refuses in the envelope too. */
export function newKoaApp(apiVersion: string): Koa<ApiState> {
  // X-Forwarded-For is read only from a configured proxy, by clientIp (src/http/middleware/client-ip.ts).
  const app = new Koa<ApiState>({ proxy: false });
  app.silent = true;
  const listen = app.listen.bind(app) as (...args: unknown[]) => Server;
  app.listen = ((...args: unknown[]) => answerMalformedRequests(listen(...args), apiVersion)) as typeof app.listen;
  return app;
}

export function createApi(deps: ApiDeps): Koa<ApiState> {
  const { config, environments, db, logger } = deps;
  const app = newKoaApp(environments.apiVersion);
  const shared: SharedRouteDeps = { cursors: createCursorCodec(deps.serviceSecret) };

  const chains = deps.chains ?? createChainRegistry(environments);
  const metrics = deps.serviceMetrics;

  app.use(requestSpan());
  app.use(requestContext(logger, { serverTiming: config.http.serverTiming }));
  app.use(requestLog(db.prisma));
  // Outside the error handler: it counts the status answered.
  if (metrics) app.use(httpMetrics(metrics));
  app.use(echoSvcVersion(environments.apiVersion));
  app.use(transportSecurity(config.http.publicBaseUrl));
  app.use(errorHandler());
  // Before anything costs: a write past the gate is refused before its body or credential is read.
  app.use(admission(new AdmissionGate(config.http.admission ?? defaultAdmission(config.database.pools.api.max))));
  app.use(discardBody(config.http.maxBodyBytes));

  const clientIp = clientAddress(config.http.trustedProxies);
  const open = new Router<ApiState>();
  registerHealthRoutes(open, { prisma: db.prisma, temporalHealth: deps.temporalHealth, probeIntervalMs: config.health.probeIntervalMs });
  const openApi = {
    apiVersion: environments.apiVersion,
    supportedApiVersions: environments.supportedApiVersions,
    publicBaseUrl: config.http.publicBaseUrl,
    offered: offeredValues(environments),
  };
  registerOpenApiRoutes(open, openApi);
  registerDocsRoutes(open, openApi);
  // Signed by the provider, not the partner: outside the partner router's Basic authentication.
  if (deps.offramp) registerProviderCallbackRoutes(open, { ...deps.offramp, maxBodyBytes: config.http.maxBodyBytes });
  mountRouter(app, open);
  // The hosted checkout (checkout.paymentUrl); its Vault option runs the client API's use cases.
  const checkout = new Router<ApiState>();
  registerCheckoutRoutes(checkout, {
    prisma: db.prisma,
    environments,
    serviceSecret: deps.serviceSecret,
    publicBaseUrl: config.http.publicBaseUrl,
    maxBodyBytes: config.http.maxBodyBytes,
    vault: deps.client ? { chains, engine: deps.client.engine } : undefined,
    limit: rateLimit(db.pool, config.ipRateLimits.checkout, (ctx) => `checkout:${clientIp(ctx)}`),
  });
  mountRouter(app, checkout);

  const svcVersion = enforceSvcVersion(environments.supportedApiVersions);
  // One quota per app, spent by its Basic credential; a client token spends its account's quota only.
  const limit = rateLimit(db.pool, config.rateLimit);
  const clientLimit = rateLimit(db.pool, config.clientRateLimit, (ctx) =>
    ctx.state.client ? `client:${ctx.state.client.accountId}` : undefined,
  );
  const body = jsonBody(config.http.maxBodyBytes);
  const idempotency = idempotencyRecords(db.bookkeeping);
  // Which modules run depends on the environments file and on what this deployment has (src/domain/apps/modules.ts).
  const runtime: ModuleRuntime = { offrampProviderCode: deps.offramp?.provider.code ?? null };
  const modules = moduleRuntime(environments, runtime);

  // Client API: its own router, so the partner router's Basic authentication never runs on it.
  if (deps.client) {
    const client = new Router<ApiState>();
    registerClientRoutes(
      client,
      {
        prisma: db.prisma,
        idempotency,
        serviceSecret: deps.serviceSecret,
        publicBaseUrl: config.http.publicBaseUrl,
        chains,
        environments,
        ...deps.client,
      },
      { rateLimit: clientLimit, jsonBody: body, svcVersion, modules },
    );
    mountRouter(app, client);
  }

  // Public Payment creation: no credential (a payer's wallet), its own router and per-IP quota.
  if (deps.engine) {
    const publicRoutes = new Router<ApiState>();
    registerPublicPaymentRoutes(
      publicRoutes,
      {
        prisma: db.prisma,
        pool: db.pool,
        idempotency,
        engine: deps.engine,
        custody: deps.custody,
        environments,
        serviceSecret: deps.serviceSecret,
        publicBaseUrl: config.http.publicBaseUrl,
        clientIp,
        perAddress: config.ipRateLimits.publicPayments,
      },
      { jsonBody: body, svcVersion, runtime },
    );
    mountRouter(app, publicRoutes);
  }

  const mailer = mailerOf(deps);
  // The partner dashboard at /dashboard: its own sessions, never the partner router's Basic authentication.
  registerPartnerDashboard(app, {
    config,
    prisma: db.prisma,
    serviceSecret: deps.serviceSecret,
    mailer,
    cursors: shared.cursors,
    engine: deps.engine,
    environments,
    signInLimit: rateLimit(db.pool, config.ipRateLimits.dashboardSignIn, (ctx) => `dashboard-sign-in:${clientIp(ctx)}`),
  });

  const partner = new Router<ApiState>();
  // Failed logins are counted per client address and app id, once they have failed.
  const failedLogins = failedCredentialLimit(db.pool, config.ipRateLimits.failedLogins, (ctx, appId) => `login:${clientIp(ctx)}:${appId}`);
  partner.use(
    authenticate(deps.credentials?.authenticate ?? ((appId, appSecret) => authenticateApp(db.prisma, appId, appSecret)), failedLogins),
  );
  partner.use(svcVersion);
  partner.use(limit);
  partner.use(body);
  partner.use(modules);
  registerPartnerConfigRoutes(partner, {
    environments,
    runtime: {
      ...runtime,
      mail: { smtpConfigured: mailer !== null },
      clientApi: deps.client !== undefined,
      partnerConsole: true,
      webhooks: config.webhooks,
    },
  });
  // Feature routes: one register call per module.
  if (deps.client) registerClientAuthRoutes(partner, { prisma: db.prisma, serviceSecret: deps.serviceSecret });
  registerIdempotencyKeyRoutes(partner, { idempotency });
  registerAccountRoutes(partner, { prisma: db.prisma, idempotency, environments, custody: deps.custody });
  registerTransactionRoutes(partner, { prisma: db.prisma, cursors: shared.cursors });
  registerEventRoutes(partner, { prisma: db.prisma, cursors: shared.cursors });
  if (deps.engine) {
    registerPaymentRoutes(partner, {
      prisma: db.prisma,
      pool: db.pool,
      idempotency,
      engine: deps.engine,
      custody: deps.custody,
      environments,
      serviceSecret: deps.serviceSecret,
      publicBaseUrl: config.http.publicBaseUrl,
      cursors: shared.cursors,
      offramp: deps.offramp,
    });
    registerSandboxRoutes(partner, { prisma: db.prisma, idempotency, engine: deps.engine, chains });
  }
  if (deps.returns)
    registerFundReturnRoutes(partner, {
      prisma: db.prisma,
      idempotency,
      custody: deps.custody,
      chains,
      engine: deps.returns,
      environments,
    });
  registerDepositRoutes(partner, { prisma: db.prisma, idempotency, custody: deps.custody, environments, cursors: shared.cursors });
  registerVaultRoutes(partner, {
    prisma: db.prisma,
    idempotency,
    custody: deps.custody,
    chains,
    environments,
    cursors: shared.cursors,
    serviceSecret: deps.serviceSecret,
    mailer,
  });
  registerBankAccountRoutes(partner, {
    prisma: db.prisma,
    idempotency,
    environments,
    cursors: shared.cursors,
    serviceSecret: deps.serviceSecret,
    provider: deps.offramp?.provider,
  });
  for (const register of deps.extraRoutes ?? []) register(partner, shared);

  mountRouter(app, partner);
  return app;
}
