import proxyaddr from 'proxy-addr';
import { z } from 'zod';
import { toolchain } from './toolchain';
import { DEFAULT_LIMIT_POLICY, type AdaptiveLimitPolicy } from '../platform/adaptive-limit';
import { parseRpcUrlSettings } from './network-settings';
import type { DatabaseRoles } from '../db/roles';
import { resolveSecretFiles, type ReadSecretFile } from './secret-files';

// Environment variables are parsed once, here, at start-up. Nothing else reads process.env.
/** TRUSTED_PROXIES' value for "no proxy in front": the socket's peer is the client. */
export const NO_PROXIES = 'none';

const ZFlag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const ZEnv = z.object({
  /**
   * sandbox: the embedded, self-provisioning stack (local seed, anvil, test token). production: every
   * sandbox default is refused. Unset: production when both DATABASE_URL and TEMPORAL_ADDRESS are set
   * (the shape a deployment runs in), else sandbox; so a deployment that forgets it fails closed.
   */
  DEPLOYMENT: z.enum(['sandbox', 'production']).optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(toolchain.ports.api),
  HOST: z.string().default('127.0.0.1'),
  PUBLIC_BASE_URL: z.url().optional(),
  /** The owner's login: migrations and grants (and, unless told otherwise, the API's and the worker's login). */
  DATABASE_URL: z.string().min(1).optional(),
  /** Each process role's own login (src/db/roles.ts); unset: DATABASE_URL's, refused in production. */
  API_DATABASE_URL: z.string().min(1).optional(),
  WORKER_DATABASE_URL: z.string().min(1).optional(),
  /** The logins the migration grants to; unset: the user names of API_/WORKER_DATABASE_URL. */
  API_DATABASE_ROLE: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a lowercase role name')
    .optional(),
  WORKER_DATABASE_ROLE: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a lowercase role name')
    .optional(),
  // The API and the worker each get a pool of their own, so neither can starve the other.
  API_DATABASE_POOL_MAX: z.coerce.number().int().min(1).default(10),
  API_DATABASE_POOL_ACQUIRE_TIMEOUT_MS: z.coerce.number().int().min(1).default(2000),
  API_DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(1).default(10_000),
  /**
   * The API's admission gate for writes (src/http/middleware/admission.ts): how many run at once (at
   * most; fewer while the adaptive limit sees them queue), how many wait and for how long; beyond, 503
   * at once. Unset: twice the API's pool, as many waiting, for 20 ms.
   */
  API_MAX_IN_FLIGHT_WRITES: z.coerce.number().int().min(1).optional(),
  API_MAX_QUEUED_WRITES: z.coerce.number().int().min(0).optional(),
  API_QUEUED_WRITE_WAIT_MS: z.coerce.number().int().min(1).default(5),
  API_ADAPTIVE_WRITE_LIMIT: ZFlag.default(true),
  WORKER_DATABASE_POOL_MAX: z.coerce.number().int().min(1).default(10),
  WORKER_DATABASE_POOL_ACQUIRE_TIMEOUT_MS: z.coerce.number().int().min(1).default(10_000),
  EMBEDDED_POSTGRES_PORT: z.coerce.number().int().min(1).max(65535).default(toolchain.ports.postgres),
  TEMPORAL_ADDRESS: z.string().min(1).optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('partner-payments'),
  TEMPORAL_RPC_TIMEOUT_MS: z.coerce.number().int().min(1).default(5000),
  TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65535).default(toolchain.ports.temporalUi),
  /** Base URL of the Temporal Web UI the operator console links to; default: the embedded dev server's UI. */
  TEMPORAL_UI_URL: z.url().optional(),
  EMBEDDED_TEMPORAL_PORT: z.coerce.number().int().min(1).max(65535).default(toolchain.ports.temporal),
  /** Without TEMPORAL_ADDRESS: `dev` runs the CLI's dev server (with its Web UI), `cluster` Temporal Server's four roles over the PostgreSQL. */
  EMBEDDED_TEMPORAL_ENGINE: z.enum(['dev', 'cluster']).default('dev'),
  /** How long a workflow update (a cancel) may take before the API answers 503 service_unavailable. */
  TEMPORAL_UPDATE_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /**
   * host:port where the worker's Temporal runtime serves its Prometheus metrics (/metrics); unset: a
   * free port on 127.0.0.1, which the API's /metrics of the same process includes.
   */
  TEMPORAL_METRICS_BIND_ADDRESS: z
    .string()
    .regex(/^(\[[0-9a-fA-F:]+\]|[^\s:[\]]+):\d{1,5}$/, 'host:port')
    .optional(),
  /** The SDK's shared V8 context for workflows (its default: less memory and CPU than one each). */
  TEMPORAL_REUSE_V8_CONTEXT: ZFlag.default(true),
  RATE_LIMIT_POINTS: z.coerce.number().int().min(1).default(100),
  RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).default(1),
  /** How often each API process adds its counts to the shared (PostgreSQL) quota; 0 = every request. */
  RATE_LIMIT_SYNC_MS: z.coerce.number().int().min(0).default(100),
  /** Each account's quota for requests with its client token (/v2/client/me/...), apart from the app's. */
  CLIENT_RATE_LIMIT_POINTS: z.coerce.number().int().min(1).default(10),
  CLIENT_RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).default(1),
  /** Per client address, before any credential is checked: failed HTTP Basic logins. */
  LOGIN_FAILURE_LIMIT_POINTS: z.coerce.number().int().min(1).default(20),
  LOGIN_FAILURE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
  /** Per client address: every request to the hosted checkout (/checkout/...). */
  CHECKOUT_RATE_LIMIT_POINTS: z.coerce.number().int().min(1).default(600),
  CHECKOUT_RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
  DASHBOARD_SIGN_IN_LIMIT_POINTS: z.coerce.number().int().min(1).default(30),
  DASHBOARD_SIGN_IN_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).default(900),
  /** Per client address, before the app is looked up: the public Payment routes of every app together. */
  PUBLIC_RATE_LIMIT_POINTS: z.coerce.number().int().min(1).default(120),
  PUBLIC_RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
  /**
   * Reverse proxies whose X-Forwarded-For is believed (comma-separated addresses, CIDR ranges, or
   * proxy-addr's names loopback, linklocal, uniquelocal), or `none`: clients connect directly and the
   * socket's address is the client's. Unset means the same as none, but production requires it set.
   */
  TRUSTED_PROXIES: z
    .string()
    .optional()
    .transform((v) => ({
      declared: v !== undefined && v.trim() !== '',
      list: (v ?? '')
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean),
    }))
    .superRefine(({ list }, ctx) => {
      if (list.includes(NO_PROXIES)) {
        if (list.length > 1) ctx.addIssue({ code: 'custom', message: `${NO_PROXIES} stands alone, not beside proxies` });
        return;
      }
      try {
        proxyaddr.compile(list);
      } catch (err) {
        ctx.addIssue({
          code: 'custom',
          message: `not an address, CIDR range or proxy name: ${err instanceof Error ? err.message : String(err)}`,
        });
      }
    })
    .transform(({ declared, list }) => ({ declared, list: list.filter((p) => p !== NO_PROXIES) })),
  /** /healthz answers from its last probe of PostgreSQL and Temporal while that probe is younger than this. */
  HEALTHZ_PROBE_INTERVAL_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  /** How long an API process trusts a verified app credential before reading the app again; 0 = never. */
  AUTH_CACHE_SECONDS: z.coerce.number().int().min(0).max(300).default(10),
  /** Answer each API request's step durations as a Server-Timing header (the bench's create breakdown). */
  SERVER_TIMING: ZFlag.default(false),
  MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(256 * 1024),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SERVICE_SECRET: z.string().min(32).optional(),
  /** Previous service keys, comma-separated, still accepted for reading and verifying (docs/decisions/accounts-and-auth.md). */
  SERVICE_SECRET_PREVIOUS: z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().min(32, 'each previous service key has 32+ characters'))),
  DATA_DIR: z.string().optional(),
  ENVIRONMENTS_FILE: z.string().optional(),
  EMBEDDED_ANVIL_PORT: z.coerce.number().int().min(1).max(65535).default(toolchain.ports.anvil),
  /** Unset: false (the spec's), but true for the embedded sandbox stack (no DATABASE_URL or TEMPORAL_ADDRESS); production refuses true. */
  WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS: ZFlag.optional(),
  /** Comma-separated `host:port` webhook destinations trusted though private (see DestinationPolicy); production allows them. */
  WEBHOOKS_TRUSTED_DESTINATIONS: z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((d) => d.trim().toLowerCase())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^[a-z0-9.-]+:\d{1,5}$/, 'each entry is host:port (a name or an IPv4 address)'))),
  /** SMTP server for vault approval codes (smtp:// or smtps://, credentials in the URL); unset: no mail. */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\/[^\s]+$/, 'an smtp:// or smtps:// URL')
    .optional(),
  MAIL_FROM: z.string().min(3).max(320).default('Partner Payments <no-reply@localhost>'),
  /** The off-ramp provider's base URL; unset: `npm start` runs the sandbox provider itself. */
  OFFRAMP_PROVIDER_URL: z.url().optional(),
  /** HMAC key of the provider's callbacks (required with OFFRAMP_PROVIDER_URL); default for the sandbox: derived from the service secret. */
  OFFRAMP_CALLBACK_SECRET: z.string().min(32).optional(),
  /** Deadline of each call to the provider. */
  OFFRAMP_PROVIDER_TIMEOUT_MS: z.coerce.number().int().min(100).default(3000),
  /** Port of the sandbox provider `npm start` runs when OFFRAMP_PROVIDER_URL is unset. */
  SANDBOX_PROVIDER_PORT: z.coerce.number().int().min(0).max(65535).default(toolchain.ports.sandboxProvider),
  /** The admin plane's listener (admin API, console, metrics): loopback unless an operator opens it. */
  ADMIN_HOST: z.string().min(1).default('127.0.0.1'),
  ADMIN_PORT: z.coerce.number().int().min(0).max(65535).default(toolchain.ports.admin),
  /** Prometheus's read-only Bearer token for /metrics on the admin listener; unset: no /metrics. */
  METRICS_TOKEN: z.string().min(32).optional(),
  /** Operator sign-in attempts per client address and per email, and failed operator tokens per address. */
  OPERATOR_SIGN_IN_LIMIT_POINTS: z.coerce.number().int().min(1).default(10),
  OPERATOR_SIGN_IN_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).default(900),
  /**
   * The admin listener's URL as operators' browsers reach it (the OpenID Connect redirect, and
   * `__Host-` Secure console cookies when https); default: http://ADMIN_HOST:ADMIN_PORT.
   */
  ADMIN_BASE_URL: z.url().optional(),
  /**
   * The company's OpenID Connect provider for console sign-in (all three, or none: then an emailed
   * code and TOTP). The client is registered there with redirect URI <ADMIN_BASE_URL>/console/login/oidc/callback.
   */
  OPERATOR_OIDC_ISSUER: z.url().optional(),
  OPERATOR_OIDC_CLIENT_ID: z.string().trim().min(1).max(255).optional(),
  OPERATOR_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  /** How long an operator console session lasts after login. */
  CONSOLE_SESSION_SECONDS: z.coerce.number().int().min(60).max(86_400).default(3600),
});

export type TEnv = z.infer<typeof ZEnv>;

/** The company's OpenID Connect provider and this service's client there. */
export interface OperatorOidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

export interface RateLimitSettings {
  points: number;
  windowSeconds: number;
  syncMs?: number;
}

export type Deployment = 'sandbox' | 'production';

export interface ServiceConfig {
  /** Whether sandbox defaults (a generated seed, anvil, the test token) are allowed: see DEPLOYMENT. */
  deployment: Deployment;
  /**
   * trustedProxies: whose X-Forwarded-For names the client (proxy-addr's trust list); empty: none.
   * proxiesDeclared: TRUSTED_PROXIES was set (to proxies or `none`), as production requires.
   */
  http: {
    port: number;
    host: string;
    publicBaseUrl: string;
    maxBodyBytes: number;
    serverTiming: boolean;
    trustedProxies: string[];
    proxiesDeclared?: boolean;
    /** The admission gate of the API's writes; absent: defaultAdmission of the API pool. */
    admission?: { maxInFlight: number; maxQueued: number; maxQueueWaitMs: number; adaptive?: Omit<AdaptiveLimitPolicy, 'maxLimit'> };
  };
  /**
   * url: the owner's (migrations); apiUrl, workerUrl: each role's own login as set (unset: url's).
   * roles: the logins granted their access after migrations, when both are known.
   */
  database: {
    url?: string;
    apiUrl?: string;
    workerUrl?: string;
    roles?: DatabaseRoles;
    embeddedPort: number;
    pools: Record<PoolRole, PoolSettings>;
  };
  temporal: {
    address?: string;
    /** Deadline of each gRPC call to Temporal that is not a long poll (src/temporal/deadlines.ts). */
    rpcTimeoutMs: number;
    namespace: string;
    taskQueue: string;
    embeddedPort: number;
    /** Without an address: the dev server, or a real cluster over the PostgreSQL (src/embedded/temporal-cluster.ts). */
    embeddedEngine: 'dev' | 'cluster';
    uiPort: number;
    /** The Web UI's base URL for links (TEMPORAL_UI_URL); unset: the embedded UI when Temporal is embedded, else no links. */
    uiUrl?: string;
    updateTimeoutMs: number;
    /** Where the worker's runtime serves its Prometheus metrics; unset: a free local port. */
    metricsBindAddress?: string;
    /** Workflows share one V8 context per thread (the SDK's default) or get one each. */
    reuseV8Context: boolean;
  };
  /** Each app's quota, spent by its Basic credential. */
  rateLimit: RateLimitSettings;
  /** Each account's quota, spent by its client tokens (never the app's). */
  clientRateLimit: RateLimitSettings;
  /** Per client address, checked before any authentication work. */
  ipRateLimits: {
    failedLogins: RateLimitSettings;
    checkout: RateLimitSettings;
    publicPayments: RateLimitSettings;
    /** The dashboard's sign-in forms (asking for a code, entering it). */
    dashboardSignIn: RateLimitSettings;
    /** Operator sign-in attempts (per address and per email) and failed operator tokens (per address). */
    operatorSignIn: RateLimitSettings;
  };
  /** probeIntervalMs: the longest /healthz answers from one probe. */
  health: { probeIntervalMs: number };
  auth?: { cacheSeconds: number };
  logLevel: TEnv['LOG_LEVEL'];
  /** HMAC key for cursors and derived secrets; the embedded default lives under .data/. */
  serviceSecret?: string;
  /** Keys SERVICE_SECRET replaced, still accepted for reading sealed columns and verifying tokens until dropped. */
  previousServiceSecrets?: string[];
  dataDir?: string;
  environmentsFile?: string;
  anvil: { embeddedPort: number };
  webhooks: { allowPrivateDestinations: boolean; trustedDestinations?: readonly string[] };
  /**
   * The admin plane (admin API, console, metrics) on a listener of its own; baseUrl: where operators'
   * browsers reach it (ADMIN_BASE_URL, declared or made up from the listener); metricsToken:
   * Prometheus's read-only credential; consoleSessionSeconds: the console session's life (default
   * 3600); oidc: the company's OpenID Connect provider for console sign-in (clientSecret is a secret).
   */
  admin: {
    host: string;
    port: number;
    baseUrl?: string;
    baseUrlDeclared?: boolean;
    metricsToken?: string;
    consoleSessionSeconds?: number;
    oidc?: OperatorOidcSettings;
  };
  /** Outgoing mail (vault approval codes). smtpUrl may hold a password: never log it. */
  mail: { smtpUrl?: string; from: string };
  /** The off-ramp provider. callbackSecret is a secret: never log it. */
  offramp: { providerUrl?: string; callbackSecret?: string; timeoutMs: number; sandboxPort: number };
  /**
   * Each network's RPC URLs in failover order, by setting name (RPC_URLS_<CODE>, src/config/network-settings.ts).
   * A URL may carry a provider's API key: log its host at most.
   */
  rpcUrls: Record<string, string[]>;
}

/** Which process role a PostgreSQL pool serves (the CLI uses the worker's settings). */
export type PoolRole = 'api' | 'worker';

export interface PoolSettings {
  max: number;
  /** How long a query waits for a free connection before failing (503 in the API). */
  acquireTimeoutMs: number;
  /** PostgreSQL's statement_timeout for the pool's sessions; unset: none. */
  statementTimeoutMs?: number;
}

export class ConfigError extends Error {}

/** The configuration from the environment; `readSecretFile` reads the `<NAME>_FILE` settings (src/config/secret-files.ts). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, readSecretFile?: ReadSecretFile): ServiceConfig {
  const { e, rpcUrls } = parseEnv(env, readSecretFile);
  const externalDatabase = Boolean(e.DATABASE_URL || e.API_DATABASE_URL || e.WORKER_DATABASE_URL);
  const deployment: Deployment = e.DEPLOYMENT ?? (externalDatabase && e.TEMPORAL_ADDRESS ? 'production' : 'sandbox');
  return {
    deployment,
    http: readHttp(e),
    database: readDatabase(e),
    temporal: readTemporal(e),
    ...readRateLimits(e),
    health: { probeIntervalMs: e.HEALTHZ_PROBE_INTERVAL_MS },
    auth: { cacheSeconds: e.AUTH_CACHE_SECONDS },
    logLevel: e.LOG_LEVEL,
    serviceSecret: e.SERVICE_SECRET,
    previousServiceSecrets: e.SERVICE_SECRET_PREVIOUS,
    dataDir: e.DATA_DIR,
    environmentsFile: e.ENVIRONMENTS_FILE,
    anvil: { embeddedPort: e.EMBEDDED_ANVIL_PORT },
    // The embedded sandbox lets developers point webhooks at local receivers over plain http; the API,
    // the worker and the CLI all read this one value.
    webhooks: {
      allowPrivateDestinations:
        e.WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS ?? (deployment === 'sandbox' && (!externalDatabase || !e.TEMPORAL_ADDRESS)),
      trustedDestinations: e.WEBHOOKS_TRUSTED_DESTINATIONS,
    },
    admin: readAdmin(e),
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM },
    offramp: readOfframp(e),
    rpcUrls,
  };
}

/** The variables checked against ZEnv and the RPC URL settings, every problem named in one ConfigError. */
function parseEnv(raw: NodeJS.ProcessEnv, readSecretFile?: ReadSecretFile): { e: TEnv; rpcUrls: ServiceConfig['rpcUrls'] } {
  const { env, problems: fileProblems } = resolveSecretFiles(raw, readSecretFile);
  const parsed = ZEnv.safeParse(env);
  const rpcUrls = parseRpcUrlSettings(env);
  const problems = [
    ...fileProblems,
    ...(parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`)),
    ...rpcUrls.problems,
  ];
  if (!parsed.success || problems.length > 0) throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  const e = parsed.data;
  if (e.OFFRAMP_PROVIDER_URL && !e.OFFRAMP_CALLBACK_SECRET)
    throw new ConfigError('invalid configuration: OFFRAMP_CALLBACK_SECRET is required with OFFRAMP_PROVIDER_URL');
  const oidcSet = [e.OPERATOR_OIDC_ISSUER, e.OPERATOR_OIDC_CLIENT_ID, e.OPERATOR_OIDC_CLIENT_SECRET].filter(Boolean).length;
  if (oidcSet !== 0 && oidcSet !== 3)
    throw new ConfigError(
      'invalid configuration: OPERATOR_OIDC_ISSUER, OPERATOR_OIDC_CLIENT_ID and OPERATOR_OIDC_CLIENT_SECRET go together (all three, or none)',
    );
  return { e, rpcUrls: rpcUrls.settings };
}

/**
 * The API's write gate from its pool: twice as many writes in flight as connections (a write holds
 * one only part of its time), and as many again waiting.
 */
export function defaultAdmission(apiPoolMax: number, maxQueueWaitMs = 5, adaptive = true): NonNullable<ServiceConfig['http']['admission']> {
  return {
    maxInFlight: 2 * apiPoolMax,
    maxQueued: 2 * apiPoolMax,
    maxQueueWaitMs,
    // Learned down to the pool's size at most: a machine busy with other work slows every write,
    // and the limit must not take that for this process's own queue.
    ...(adaptive ? { adaptive: { ...DEFAULT_LIMIT_POLICY, minLimit: apiPoolMax } } : {}),
  };
}

function readHttp(e: TEnv): ServiceConfig['http'] {
  return {
    port: e.PORT,
    host: e.HOST,
    publicBaseUrl: e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`,
    maxBodyBytes: e.MAX_BODY_BYTES,
    serverTiming: e.SERVER_TIMING,
    trustedProxies: e.TRUSTED_PROXIES.list,
    proxiesDeclared: e.TRUSTED_PROXIES.declared,
    admission: {
      ...defaultAdmission(e.API_DATABASE_POOL_MAX, e.API_QUEUED_WRITE_WAIT_MS, e.API_ADAPTIVE_WRITE_LIMIT),
      ...(e.API_MAX_IN_FLIGHT_WRITES ? { maxInFlight: e.API_MAX_IN_FLIGHT_WRITES } : {}),
      ...(e.API_MAX_QUEUED_WRITES !== undefined ? { maxQueued: e.API_MAX_QUEUED_WRITES } : {}),
    },
  };
}

function readDatabase(e: TEnv): ServiceConfig['database'] {
  const api = e.API_DATABASE_ROLE ?? userOf(e.API_DATABASE_URL);
  const worker = e.WORKER_DATABASE_ROLE ?? userOf(e.WORKER_DATABASE_URL);
  return {
    url: e.DATABASE_URL,
    apiUrl: e.API_DATABASE_URL,
    workerUrl: e.WORKER_DATABASE_URL,
    ...(api && worker ? { roles: { api, worker } } : {}),
    embeddedPort: e.EMBEDDED_POSTGRES_PORT,
    pools: {
      api: {
        max: e.API_DATABASE_POOL_MAX,
        acquireTimeoutMs: e.API_DATABASE_POOL_ACQUIRE_TIMEOUT_MS,
        statementTimeoutMs: e.API_DATABASE_STATEMENT_TIMEOUT_MS,
      },
      worker: { max: e.WORKER_DATABASE_POOL_MAX, acquireTimeoutMs: e.WORKER_DATABASE_POOL_ACQUIRE_TIMEOUT_MS },
    },
  };
}

/** The login of a postgresql:// URL, if it names one. */
export function userOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return decodeURIComponent(new URL(url).username) || undefined;
  } catch {
    return undefined;
  }
}

function readTemporal(e: TEnv): ServiceConfig['temporal'] {
  return {
    address: e.TEMPORAL_ADDRESS,
    namespace: e.TEMPORAL_NAMESPACE,
    taskQueue: e.TEMPORAL_TASK_QUEUE,
    rpcTimeoutMs: e.TEMPORAL_RPC_TIMEOUT_MS,
    embeddedPort: e.EMBEDDED_TEMPORAL_PORT,
    embeddedEngine: e.EMBEDDED_TEMPORAL_ENGINE,
    uiPort: e.TEMPORAL_UI_PORT,
    uiUrl:
      e.TEMPORAL_UI_URL ??
      (e.TEMPORAL_ADDRESS || e.EMBEDDED_TEMPORAL_ENGINE === 'cluster' ? undefined : `http://127.0.0.1:${e.TEMPORAL_UI_PORT}`),
    updateTimeoutMs: e.TEMPORAL_UPDATE_TIMEOUT_MS,
    metricsBindAddress: e.TEMPORAL_METRICS_BIND_ADDRESS,
    reuseV8Context: e.TEMPORAL_REUSE_V8_CONTEXT,
  };
}

/** Every quota: the app's, the account's and the per-address ones, all synced to PostgreSQL as often. */
function readRateLimits(e: TEnv): Pick<ServiceConfig, 'rateLimit' | 'clientRateLimit' | 'ipRateLimits'> {
  const quota = (points: number, windowSeconds: number): RateLimitSettings => ({ points, windowSeconds, syncMs: e.RATE_LIMIT_SYNC_MS });
  return {
    rateLimit: quota(e.RATE_LIMIT_POINTS, e.RATE_LIMIT_WINDOW_SECONDS),
    clientRateLimit: quota(e.CLIENT_RATE_LIMIT_POINTS, e.CLIENT_RATE_LIMIT_WINDOW_SECONDS),
    ipRateLimits: {
      failedLogins: quota(e.LOGIN_FAILURE_LIMIT_POINTS, e.LOGIN_FAILURE_LIMIT_WINDOW_SECONDS),
      checkout: quota(e.CHECKOUT_RATE_LIMIT_POINTS, e.CHECKOUT_RATE_LIMIT_WINDOW_SECONDS),
      publicPayments: quota(e.PUBLIC_RATE_LIMIT_POINTS, e.PUBLIC_RATE_LIMIT_WINDOW_SECONDS),
      dashboardSignIn: quota(e.DASHBOARD_SIGN_IN_LIMIT_POINTS, e.DASHBOARD_SIGN_IN_LIMIT_WINDOW_SECONDS),
      operatorSignIn: quota(e.OPERATOR_SIGN_IN_LIMIT_POINTS, e.OPERATOR_SIGN_IN_LIMIT_WINDOW_SECONDS),
    },
  };
}

/** The admin listener's URL as operators' browsers reach it: ADMIN_BASE_URL, else the listener's own address. */
export function adminBaseUrl(admin: Pick<ServiceConfig['admin'], 'host' | 'port' | 'baseUrl'>): string {
  const host = admin.host.includes(':') ? `[${admin.host}]` : admin.host;
  return (admin.baseUrl ?? `http://${host}:${admin.port}`).replace(/\/$/, '');
}

function readAdmin(e: TEnv): ServiceConfig['admin'] {
  const issuer = e.OPERATOR_OIDC_ISSUER;
  return {
    host: e.ADMIN_HOST,
    port: e.ADMIN_PORT,
    baseUrl: adminBaseUrl({ host: e.ADMIN_HOST, port: e.ADMIN_PORT, baseUrl: e.ADMIN_BASE_URL }),
    baseUrlDeclared: Boolean(e.ADMIN_BASE_URL),
    metricsToken: e.METRICS_TOKEN,
    consoleSessionSeconds: e.CONSOLE_SESSION_SECONDS,
    oidc: issuer ? { issuer, clientId: e.OPERATOR_OIDC_CLIENT_ID!, clientSecret: e.OPERATOR_OIDC_CLIENT_SECRET! } : undefined,
  };
}

function readOfframp(e: TEnv): ServiceConfig['offramp'] {
  return {
    providerUrl: e.OFFRAMP_PROVIDER_URL,
    callbackSecret: e.OFFRAMP_CALLBACK_SECRET,
    timeoutMs: e.OFFRAMP_PROVIDER_TIMEOUT_MS,
    sandboxPort: e.SANDBOX_PROVIDER_PORT,
  };
}
