import type { RouterContext, RouterInstance, RouterMiddleware } from '@koa/router';
import type { Logger } from '../logger';
import type { AuthenticatedApp } from '../domain/apps/apps';
import type { ClientPrincipal } from '../domain/client-auth/access-tokens';
import type { TEnvironments } from '../config/environments';
import type { ModuleRuntime } from '../domain/apps/modules';
import type { SignedInOperator } from '../domain/operators/operator-accounts';
import type { IdempotentRequest } from '../domain/requests/idempotency-records';

export interface ApiState {
  requestId: string;
  log: Logger;
  /** Set once the credential is authenticated, or, on a public route, the app its path names. */
  app?: AuthenticatedApp;
  /** The app was set by a verified credential (its secret, or a client token), not by a public path. */
  authenticated?: boolean;
  /** Client API only: the account a verified bearer token speaks for (app is then the token's app). */
  client?: ClientPrincipal;
  /** The exact request bytes (idempotency compares them byte for byte). */
  rawBody?: Buffer;
  body?: unknown;
  /** Set by the idempotency middleware once it holds the key: what a create records on what it makes. */
  idempotency?: IdempotentRequest;
  /** What requireModule judges modules by (set by the moduleRuntime middleware). */
  modules?: { environments: TEnvironments; runtime: ModuleRuntime };
  /** Admin plane only: the operator a token or a console session speaks for. */
  operator?: SignedInOperator;
}

export type ApiContext = RouterContext<ApiState>;
export type ApiMiddleware = RouterMiddleware<ApiState>;
export type ApiRouter = RouterInstance<ApiState>;

export function requireApp(ctx: { state: ApiState }): AuthenticatedApp {
  const app = ctx.state.app;
  if (!app) throw new Error('route reached without authentication');
  return app;
}

export function requireClient(ctx: { state: ApiState }): ClientPrincipal {
  const client = ctx.state.client;
  if (!client) throw new Error('client route reached without a bearer token');
  return client;
}

export function requireOperator(ctx: { state: ApiState }): SignedInOperator {
  const operator = ctx.state.operator;
  if (!operator) throw new Error('admin route reached without an operator');
  return operator;
}
