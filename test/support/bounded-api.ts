import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type Koa from 'koa';
import { createApi, type ApiDeps } from '../../src/http/app';
import { createAdminApi } from '../../src/http/admin-app';
import type { ApiState } from '../../src/http/context';
import { createTemporalGateway } from '../../src/temporal/gateway';
import { apiDepsOnHarness, getHarness, testEnginePolicies } from './harness';

/**
 * An API of its own on the shared harness whose workflow updates (cancel) answer within
 * updateTimeoutMs: with the worker stopped, a cancel is then a prompt 503 instead of the
 * service's 10 s default.
 */
export async function apiWithUpdateTimeout(updateTimeoutMs: number): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const h = await getHarness();
  const engine = createTemporalGateway(h.env.client, { taskQueue: h.taskQueue, updateTimeoutMs, policies: testEnginePolicies() });
  return listenApi(await apiDepsOnHarness({ engine }));
}

/** The real app on a port of its own, with the dependencies given (a tiny pool, another gateway...). */
export function listenApi(deps: ApiDeps, app = createApi(deps)): Promise<{ baseUrl: string; close(): Promise<void> }> {
  return listenOnAnyPort(app);
}

/** The real admin plane (admin API, console, metrics) on a port of its own. */
export function listenAdminApi(deps: ApiDeps, app = createAdminApi(deps)): Promise<{ baseUrl: string; close(): Promise<void> }> {
  return listenOnAnyPort(app);
}

async function listenOnAnyPort(app: Koa<ApiState>): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Runs fn with the shared worker stopped (no workflow task or activity runs), and starts it again. */
export async function withWorkerStopped<T>(fn: () => Promise<T>): Promise<T> {
  const h = await getHarness();
  await h.stopWorker();
  try {
    return await fn();
  } finally {
    await h.startWorker();
  }
}
