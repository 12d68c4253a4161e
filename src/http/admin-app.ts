import type Koa from 'koa';
import type { ApiState } from './context';
import { mailerOf, newKoaApp, type ApiDeps } from './app';
import { createChainRegistry } from '../chain/registry';
import { createCursorCodec } from '../domain/requests/pagination';
import { requestContext } from './middleware/request-context';
import { errorHandler } from './middleware/error-handler';
import { echoSvcVersion } from './middleware/versioning';
import { discardBody } from './middleware/json-body';
import { clientAddress } from './middleware/client-ip';
import { operatorAuth, operatorThrottle } from './middleware/admin-auth';
import type { AdminRouteDeps } from './admin-router';
import { registerWebhookAdminRoutes } from './routes/webhooks-admin';
import { registerAlertAdminRoutes } from './routes/alerts-admin';
import { registerAppAdminRoutes } from './routes/apps-admin';
import { registerDashboardUserAdminRoutes } from './routes/dashboard-users-admin';
import { registerFundReturnAdminRoutes } from './routes/fund-returns';
import { registerHoldAdminRoutes } from './routes/holds-admin';
import { registerApprovalAdminRoutes } from './routes/approvals-admin';
import { registerMetricsRoutes } from './routes/metrics';
import { registerOperatorConsole } from './console/console';
import { adminBaseUrl } from '../config';
import { operatorOidc } from '../domain/operators/operator-oidc';

/**
 * The admin plane (docs/decisions/dashboard-and-console.md "The admin plane"): the admin API
 * (/admin/v1), the operator console (/console) and Prometheus's /metrics, on a listener of their own
 * (ADMIN_HOST/ADMIN_PORT, loopback by default), never on the partner port. Operators authenticate as
 * themselves: a token of their own on the admin API, the company's OpenID Connect provider or an
 * emailed code and TOTP in the console; the
 * metrics scraper with METRICS_TOKEN, which opens nothing else.
 */
export function createAdminApi(deps: ApiDeps): Koa<ApiState> {
  const { config, environments, db, logger } = deps;
  const app = newKoaApp(environments.apiVersion);
  app.use(requestContext(logger, { serverTiming: config.http.serverTiming }));
  app.use(echoSvcVersion(environments.apiVersion));
  app.use(errorHandler());
  app.use(discardBody(config.http.maxBodyBytes));

  const chains = deps.chains ?? createChainRegistry(environments);
  const cursors = createCursorCodec(deps.serviceSecret);
  const throttle = operatorThrottle({
    pool: db.pool,
    prisma: db.prisma,
    logger,
    policy: config.ipRateLimits.operatorSignIn,
    clientIp: clientAddress(config.http.trustedProxies),
  });
  const admin: AdminRouteDeps = { auth: operatorAuth(db.prisma, throttle), maxBodyBytes: config.http.maxBodyBytes, prisma: db.prisma };

  registerWebhookAdminRoutes(app, { ...admin, config, environments, serviceSecret: deps.serviceSecret, cursors, engine: deps.engine });
  registerAlertAdminRoutes(app, { ...admin, cursors });
  registerAppAdminRoutes(app, admin);
  registerDashboardUserAdminRoutes(app, admin);
  if (deps.returns) registerFundReturnAdminRoutes(app, { ...admin, custody: deps.custody, chains, engine: deps.returns });
  if (deps.operator) {
    registerHoldAdminRoutes(app, { ...admin, chains, engine: deps.operator.engine });
    registerApprovalAdminRoutes(app, { ...admin, chains, custody: deps.custody, engine: deps.operator.engine });
    registerOperatorConsole(app, {
      config,
      prisma: db.prisma,
      serviceSecret: deps.serviceSecret,
      chains,
      custody: deps.custody,
      cursors,
      mailer: mailerOf(deps),
      throttle,
      oidc: config.admin.oidc ? operatorOidc(config.admin.oidc, adminBaseUrl(config.admin)) : undefined,
      ...deps.operator,
    });
  }
  if (config.admin.metricsToken && deps.serviceMetrics)
    registerMetricsRoutes(app, { metricsToken: config.admin.metricsToken, metrics: deps.serviceMetrics });
  return app;
}
