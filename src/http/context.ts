import type { RouterContext, RouterInstance, RouterMiddleware } from '@koa/router';
import type { Logger } from '../logger';
import type { AuthenticatedApp } from '../domain/apps';

export interface ApiState {
  requestId: string;
  log: Logger;
  /** Set once the credential is authenticated. */
  app?: AuthenticatedApp;
  /** The exact request bytes (idempotency compares them byte for byte). */
  rawBody?: Buffer;
  body?: unknown;
}

export type ApiContext = RouterContext<ApiState>;
export type ApiMiddleware = RouterMiddleware<ApiState>;
export type ApiRouter = RouterInstance<ApiState>;

export function requireApp(ctx: { state: ApiState }): AuthenticatedApp {
  const app = ctx.state.app;
  if (!app) throw new Error('route reached without authentication');
  return app;
}
