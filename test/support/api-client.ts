import { createApp, type AppCredential, type Scope } from '../../src/domain/apps/apps';
import { partnersOpenApi } from '../../src/http/openapi/document';
import { offeredValues } from '../../src/http/openapi/request-rules';
import { getHarness } from './harness';
import { createResponseChecker, type ResponseChecker } from './openapi-check';
import { pollInProgress, ServerErrorAnswer } from './until';

/** The document the harness's API serves (built from the same modules and settings). */
export async function harnessOpenApi() {
  const h = await getHarness();
  return partnersOpenApi({
    apiVersion: h.environments.apiVersion,
    supportedApiVersions: h.environments.supportedApiVersions,
    publicBaseUrl: h.config.http.publicBaseUrl,
    offered: offeredValues(h.environments),
  });
}

let checker: ResponseChecker | undefined;
/** The checker of the document the harness's API serves (built from the same modules). */
export async function responseChecker(): Promise<ResponseChecker> {
  if (!checker) {
    checker = createResponseChecker(await harnessOpenApi());
  }
  return checker;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  rawBody?: string;
  credential?: AppCredential | null;
  headers?: Record<string, string>;
  /** Another instance of the app (default: the harness's API). */
  baseUrl?: string;
  /** Inside a poll, a 5xx answer is returned instead of failing the poll at once (a poll that waits for one). */
  allowServerError?: boolean;
}

/**
 * Calls the running API over real HTTP, as a partner would. Every answer of a documented operation
 * is checked against the OpenAPI document (status, body, required headers): a mismatch fails the test.
 * Inside a poll (test/support/until.ts) a 5xx answer fails the poll at once: it is a fault, not "not yet".
 */
export async function call<T = any>(path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
  const baseUrl = opts.baseUrl ?? (await getHarness()).baseUrl;
  const polling = pollInProgress();
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.credential) headers.authorization = basicAuth(opts.credential.appId, opts.credential.appSecret);
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const method = opts.method ?? (body === undefined ? 'GET' : 'POST');
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (polling !== undefined && res.status >= 500 && !opts.allowServerError) {
    throw new ServerErrorAnswer(res.status, `${method} ${path} (while waiting for ${polling})`, text);
  }
  (await responseChecker()).check({ method, path, status: res.status, headers: res.headers, body: parsed, text });
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

let counter = 0;

/** A fresh app (the same code path as `npm run cli -- apps create`). */
export async function newApp(opts: { environment?: 'sandbox' | 'production'; scopes?: Scope[] } = {}): Promise<AppCredential> {
  const h = await getHarness();
  counter += 1;
  return createApp(
    h.db.prisma,
    { name: `test-app-${counter}`, environment: opts.environment ?? 'sandbox', ...(opts.scopes ? { scopes: opts.scopes } : {}) },
    h.environments.apiVersion,
  );
}

let userCounter = 0;
export function uniqueUserId(prefix = 'user'): string {
  userCounter += 1;
  return `${prefix}-${process.pid}-${Date.now()}-${userCounter}`;
}

/** A client access token for one account of the app (POST /v2/client/auth/exchange). */
export async function clientTokenFor(cred: AppCredential, accountId: string): Promise<string> {
  const res = await call('/v2/client/auth/exchange', { credential: cred, body: { accountId } });
  if (res.status !== 200) throw new Error(`token exchange answered ${res.status}: ${res.text}`);
  return res.body.accessToken as string;
}
