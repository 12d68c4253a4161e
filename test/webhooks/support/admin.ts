import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type Koa from 'koa';
import { createApi } from '../../../src/http/app';
import type { ApiState } from '../../../src/http/context';
import { getHarness, apiDepsOnHarness } from '../../support/harness';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';

export interface AdminApi {
  baseUrl: string;
  /** The Koa app behind baseUrl (its routers list its routes). */
  app: Koa<ApiState>;
  call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    token?: string | null,
  ): Promise<{ status: number; body: T; headers: Headers }>;
  close(): Promise<void>;
}

/**
 * The real API with an admin token configured: `allowPrivate` true for delivery tests (local
 * receivers), false to check the spec's refusal of private destinations.
 */
export async function startAdminApi(opts: {
  allowPrivate: boolean;
  token?: string;
  withEngine?: boolean;
  withOperator?: boolean;
}): Promise<AdminApi> {
  const h = await getHarness();
  const api = createApi(
    await apiDepsOnHarness({
      config: { ...h.config, admin: { apiToken: opts.token ?? ADMIN_TOKEN }, webhooks: { allowPrivateDestinations: opts.allowPrivate } },
      // No Temporal client by default: the admin API's best-effort kick of the dispatcher stays out of
      // the tests, which drive dispatch themselves (dispatchWebhooksNow). withEngine: every route
      // (the Payment and client routes need the engine), for tests of the whole surface. withOperator:
      // the operator's hold routes too (admin resolve, and the console, which the fuzz has no model of).
      ...(opts.withEngine
        ? {
            engine: h.engine,
            temporalHealth: () => h.engine.ping(),
            chains: h.chain.chains,
            client: { engine: h.engine },
            returns: h.engine,
          }
        : {}),
      ...(opts.withOperator ? { operator: { engine: h.engine } } : {}),
    }),
  );
  const server: Server = await new Promise((resolve) => {
    const s = api.listen(0, '127.0.0.1', () => resolve(s));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    app: api,
    async call(method, path, body, token = ADMIN_TOKEN) {
      const headers: Record<string, string> = {};
      if (token !== null) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : undefined) as never, headers: res.headers };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
