import type { TEnvironments } from '../../../src/config/environments';
import type Koa from 'koa';
import { createApi } from '../../../src/http/app';
import { createAdminApi } from '../../../src/http/admin-app';
import { createServiceMetrics } from '../../../src/http/metrics';
import type { ApiState } from '../../../src/http/context';
import type { OperatorRole } from '../../../src/domain/operators/pure/operator-roles';
import { getHarness, apiDepsOnHarness } from '../../support/harness';
import { listenAdminApi, listenApi } from '../../support/bounded-api';
import { createTestOperator, type TestOperator } from '../../support/operators';

/** Prometheus's read-only credential in these tests (METRICS_TOKEN). */
export const METRICS_TOKEN = 'test-metrics-token-0123456789abcdef0123456789';

export interface AdminApi {
  /** The partner API of this deployment. */
  baseUrl: string;
  /** Its admin plane: admin API, console, metrics. */
  adminBaseUrl: string;
  /** The partner API's Koa app and the admin plane's (their routers list their routes). */
  app: Koa<ApiState>;
  adminApp: Koa<ApiState>;
  /** An operator of `role` (admin by default), whose token `call` sends. */
  operator: TestOperator;
  token: string;
  call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    token?: string | null,
  ): Promise<{ status: number; body: T; headers: Headers }>;
  close(): Promise<void>;
}

/**
 * The real partner API and its admin plane, each on a port of its own: `allowPrivate` true for
 * delivery tests (local receivers), false to check the spec's refusal of private destinations.
 */
export async function startAdminApi(opts: {
  allowPrivate: boolean;
  withEngine?: boolean;
  withOperator?: boolean;
  role?: OperatorRole;
  /** The environments the APIs run with (default: the harness's). */
  environments?: TEnvironments;
}): Promise<AdminApi> {
  const h = await getHarness();
  const deps = await apiDepsOnHarness({
    config: {
      ...h.config,
      admin: { ...h.config.admin, metricsToken: METRICS_TOKEN },
      webhooks: { allowPrivateDestinations: opts.allowPrivate },
    },
    ...(opts.environments ? { environments: opts.environments } : {}),
    // No Temporal client by default: the admin API's best-effort kick of the dispatcher stays out of
    // the tests, which drive dispatch themselves (dispatchWebhooksNow). withEngine: every route
    // (the Payment and client routes need the engine), for tests of the whole surface. withOperator:
    // the operator's hold routes too (admin resolve, and the console, which the fuzz has no model of).
    ...(opts.withEngine
      ? { engine: h.engine, temporalHealth: () => h.engine.ping(), chains: h.chain.chains, client: { engine: h.engine }, returns: h.engine }
      : {}),
    ...(opts.withOperator ? { operator: { engine: h.engine } } : {}),
    serviceMetrics: createServiceMetrics({ prisma: h.db.prisma, chains: h.chain.chains, temporalMetricsUrl: h.temporalMetricsUrl }),
  });
  const app = createApi(deps);
  const partner = await listenApi(deps, app);
  const adminApp = createAdminApi(deps);
  const adminPlane = await listenAdminApi(deps, adminApp);
  const operator = await createTestOperator(opts.role ?? 'admin');
  return {
    baseUrl: partner.baseUrl,
    adminBaseUrl: adminPlane.baseUrl,
    app,
    adminApp,
    operator,
    token: operator.token,
    async call(method, path, body, token = operator.token) {
      const headers: Record<string, string> = {};
      if (token !== null) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${adminPlane.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : undefined) as never, headers: res.headers };
    },
    async close() {
      await partner.close();
      await adminPlane.close();
    },
  };
}
