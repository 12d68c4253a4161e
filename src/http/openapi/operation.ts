import { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject, ZodOpenApiResponseObject } from 'zod-openapi';
import { foreignUpstreamCodes, upstreamFamily, type UpstreamFamily } from '../upstream-codes';

type StatusKey = `${1 | 2 | 3 | 4 | 5}${string}`;
import { ERROR_STATUS, ZErrorBody } from '../../domain/requests/errors';
import type { Scope } from '../../domain/apps/apps';
import { ZIdempotencyKey } from '../middleware/idempotency';
import { SVC_VERSION_HEADER } from '../middleware/versioning';

/** The paths one route file serves: src/http/openapi/<route file>.ts exports one of these. */
export type OpenApiPaths = ZodOpenApiPathsObject;

/**
 * Who may call an operation, as the route's middleware decides it:
 * app = HTTP Basic app credentials (partner router); client = Bearer client token (client router);
 * client+paymentSecret = the token plus X-Svc-Payment-Secret; provider = the off-ramp provider's
 * signature; none = public.
 */
export type Auth = 'app' | 'client' | 'client+paymentSecret' | 'provider' | 'none';

export const SECURITY_SCHEMES = {
  appCredentials: {
    type: 'http',
    scheme: 'basic',
    description: 'HTTP Basic: username is the app id, password is the app secret. Server-side only.',
  },
  clientToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'A short-lived, account-bound access token from POST /v2/client/auth/exchange.',
  },
  paymentSecret: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Svc-Payment-Secret',
    description:
      "The Payment's checkout.clientSecret: proves access to exactly one Payment. Never put it in a URL, an analytics event or a log.",
  },
  providerSignature: {
    type: 'apiKey',
    in: 'header',
    name: 'sandbox-provider-signature',
    description:
      'The off-ramp provider signs each callback over its exact bytes: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`.',
  },
} as const;

const SECURITY: Record<Auth, Array<Record<string, string[]>>> = {
  app: [{ appCredentials: [] }],
  client: [{ clientToken: [] }],
  'client+paymentSecret': [{ clientToken: [], paymentSecret: [] }],
  provider: [{ providerSignature: [] }],
  none: [],
};

// ---- response headers: components (document.ts registers them), referenced by every response ----
const integerHeader = (description: string) => z.string().regex(/^\d+$/).meta({ description });

/** Every response header, by component id; Svc-Version's values are the environments' supported versions. */
export function headerComponents(supportedApiVersions: readonly string[]) {
  return {
    SvcVersion: z.enum(supportedApiVersions as [string, ...string[]]).meta({
      description: 'The API version of this answer: the app environment pin once the credential is known, else the current version.',
      example: supportedApiVersions[0],
    }),
    RequestId: z.string().meta({ description: 'The request id (the X-Request-Id sent, when well-formed; else a new one).' }),
    RateLimitLimit: integerHeader('The quota of the window (requests).').optional(),
    RateLimitRemaining: integerHeader('Requests left in the window.').optional(),
    RateLimitReset: integerHeader('Seconds until the window resets.').optional(),
    RetryAfter: integerHeader('Seconds to wait before retrying (>= 1).'),
    // Optional: Basic and Bearer answers carry it, a provider callback's bad signature has no challenge.
    WwwAuthenticate: z.string().optional().meta({ description: 'The authentication challenge (Basic or Bearer routes).' }),
    IdempotentReplayed: z
      .literal('true')
      .optional()
      .meta({ description: 'Present when this answer is the stored answer of an earlier request with the same Idempotency-Key.' }),
  };
}

type HeaderId = keyof ReturnType<typeof headerComponents>;
const headerRef = (id: HeaderId) => ({ $ref: `#/components/headers/${id}` });

function headers(auth: Auth, extra: Record<string, HeaderId> = {}) {
  const limited = auth === 'app' || auth === 'client' || auth === 'client+paymentSecret';
  const names: Record<string, HeaderId> = {
    [SVC_VERSION_HEADER]: 'SvcVersion',
    'X-Request-Id': 'RequestId',
    ...(limited
      ? { 'RateLimit-Limit': 'RateLimitLimit', 'RateLimit-Remaining': 'RateLimitRemaining', 'RateLimit-Reset': 'RateLimitReset' }
      : {}),
    ...extra,
  };
  return Object.fromEntries(Object.entries(names).map(([name, id]) => [name, headerRef(id)]));
}

/** The Svc-Version request header: an enum of the supported versions, one component (document.ts). */
export function svcVersionParameter(supportedApiVersions: readonly string[]) {
  return z
    .enum(supportedApiVersions as [string, ...string[]])
    .optional()
    .meta({
      description: "The API version the caller expects; it must equal the app environment's pin (else 400 api_version_mismatch).",
      example: supportedApiVersions[0],
      param: { in: 'header', name: SVC_VERSION_HEADER },
    });
}
const svcVersionParam = { $ref: '#/components/parameters/SvcVersion' };

// ---- errors: one response per status, its codes taken from the one code -> status table ----
// An endpoint answers one family of upstream codes (src/http/upstream-codes.ts): the other's are left out.
const codesAt = (status: number, family: UpstreamFamily) => {
  const foreign: readonly string[] = foreignUpstreamCodes(family);
  return Object.entries(ERROR_STATUS)
    .filter(([code, s]) => s === status && !foreign.includes(code))
    .map(([code]) => code);
};

const ERROR_MEANING: Record<number, string> = {
  400: 'The request is invalid (body, query, path, headers or Svc-Version); details.fields names each field.',
  401: 'Authentication is missing or invalid.',
  403: 'The credential lacks the scope of this endpoint (details.requiredScope).',
  404: 'The resource (or one the path names) does not exist for this credential.',
  408: 'The request was not received in time.',
  409: 'A conflict: an Idempotency-Key reused or still running, a stale version, or a state that refuses the call.',
  413: 'The request body is too large.',
  415: 'The request body is not application/json.',
  422: 'The request is well-formed but this method, amount or destination is not supported.',
  424: 'The module or network is not configured for this app or environment (chain_config_missing).',
  429: 'Too many requests: retry after Retry-After. Quotas: per app (HTTP Basic), per account (a client token, never the app’s), per client address (failed logins, before the credential is checked; public routes, before the app is read).',
  431: 'The request headers are too large.',
  500: 'An unexpected fault (never a client mistake); the request may be retried with the same Idempotency-Key.',
  502: 'An upstream (the chain RPC, the workflow engine or the off-ramp provider) answered with an error; retry with backoff and the same Idempotency-Key.',
  503: 'The service or an upstream is unavailable: retry after Retry-After with the same Idempotency-Key.',
};

/**
 * One response component per error status (ErrorNNN), shared by every operation that can answer it;
 * at 502 and 503 one per family of upstream codes (PaymentErrorNNN for the Payment paths).
 */
export function errorResponse(status: number, family: UpstreamFamily = 'service'): ZodOpenApiResponseObject {
  const codes = codesAt(status, family);
  const extra: Record<string, HeaderId> = {};
  if (status === 429 || status === 503) extra['Retry-After'] = 'RetryAfter';
  if (status === 401) extra['WWW-Authenticate'] = 'WwwAuthenticate';
  return {
    id: `${family === 'payment' && hasUpstreamCodes(status) ? 'Payment' : ''}Error${status}`,
    description: `${ERROR_MEANING[status] ?? 'Error'} Codes: ${codes.join(', ')}.`,
    headers: headers('app', extra),
    content: {
      'application/json': {
        schema: ZErrorBody.extend({ error: ZErrorBody.shape.error.extend({ code: z.enum(codes as [string, ...string[]]) }) }),
        examples: { [codes[0]!]: { value: { error: { code: codes[0]!, message: ERROR_MEANING[status] ?? 'Error' } } } },
      },
    },
  };
}

/** Whether a status is one of the upstream codes' (502, 503), whose codes differ by family. */
const hasUpstreamCodes = (status: number) => codesAt(status, 'payment').join() !== codesAt(status, 'service').join();

const ERROR_RESPONSES = new Map<string, ZodOpenApiResponseObject>();
const errorResponseOnce = (status: number, family: UpstreamFamily = 'service') => {
  const key = `${family} ${status}`;
  let r = ERROR_RESPONSES.get(key);
  if (!r) ERROR_RESPONSES.set(key, (r = errorResponse(status, family)));
  return r;
};

/**
 * The paths with each operation's 502 and 503 in the family of upstream codes its path answers
 * (src/http/upstream-codes.ts): operations are built without their path, so the document applies it.
 */
export function withUpstreamCodes(paths: ZodOpenApiPathsObject): ZodOpenApiPathsObject {
  const out: ZodOpenApiPathsObject = {};
  for (const [path, item] of Object.entries(paths)) {
    const family = upstreamFamily(path);
    const operations = Object.entries(item as Record<string, ZodOpenApiOperationObject>).map(([method, op]) => {
      const responses = { ...op.responses } as Record<string, unknown>;
      for (const status of Object.keys(responses)) {
        if (hasUpstreamCodes(Number(status))) responses[status] = errorResponseOnce(Number(status), family);
      }
      return [method, { ...op, responses }];
    });
    out[path as keyof ZodOpenApiPathsObject] = Object.fromEntries(operations);
  }
  return out;
}

// ---- request headers (components) ----
const IDEMPOTENCY_KEY = {
  description:
    'Makes the request safe to retry: an identical retry gets the stored answer (Idempotent-Replayed: true); the same key with another request answers 409 idempotency_conflict.',
  example: 'order-4711-attempt-1',
};
const idempotencyKeyRequired = ZIdempotencyKey.meta({ ...IDEMPOTENCY_KEY, param: { id: 'IdempotencyKeyRequired' } });
const idempotencyKeyOptional = ZIdempotencyKey.optional().meta({ ...IDEMPOTENCY_KEY, param: { id: 'IdempotencyKey' } });

// ---- operations ----
type ZObject = z.ZodObject;

export interface OperationSpec {
  operationId: string;
  summary: string;
  description?: string;
  tags: readonly string[];
  auth: Auth;
  scope?: Scope;
  idempotency?: 'required' | 'optional';
  /** The key the route validates when it narrows ZIdempotencyKey (default: ZIdempotencyKey itself). */
  idempotencyKey?: z.ZodString;
  /** The route enforces Svc-Version (default: the credentialed routes do). */
  svcVersion?: boolean;
  path?: ZObject;
  query?: ZObject;
  /** JSON body: its schema (zod, or the JSON Schema that validates it) and an example. */
  body?: { schema: z.ZodType | Record<string, unknown>; example: unknown; description?: string };
  /** Success answers: status -> schema and example. */
  responses: Record<number, { description: string; schema: z.ZodType; example?: unknown }>;
  /** Error statuses this operation can answer beyond those its auth, body, path and idempotency imply. */
  errors?: number[];
  /** Statuses implied by the route's shape that it can't answer (rare). */
  withoutErrors?: number[];
}

/** Builds one operation with its security, standard headers and every error status it can answer. */
export function operation(spec: OperationSpec): ZodOpenApiOperationObject {
  const errors = new Set<number>(spec.errors ?? []);
  const guarded = spec.auth === 'app' || spec.auth === 'client' || spec.auth === 'client+paymentSecret';
  if (guarded) {
    // Svc-Version mismatch (400), authentication (401), the shared quota (429).
    [400, 401, 429].forEach((s) => errors.add(s));
    // Every credentialed route belongs to a module, answering 424 while it is off (src/domain/apps/modules.ts).
    errors.add(424);
  }
  if (spec.auth === 'provider') errors.add(401);
  if (spec.scope) errors.add(403);
  if (spec.path || spec.query) errors.add(400);
  if (spec.path) errors.add(404);
  if (spec.body) [400, 413, 415].forEach((s) => errors.add(s));
  if (spec.idempotency) [400, 409].forEach((s) => errors.add(s));
  // Every operation that reads the database can find the service at capacity, or fail unexpectedly.
  if (spec.auth !== 'none') [500, 503].forEach((s) => errors.add(s));
  for (const s of spec.withoutErrors ?? []) errors.delete(s);

  const headerParams: Record<string, z.ZodType> = {};
  if (spec.idempotencyKey) {
    const key = spec.idempotencyKey.meta(IDEMPOTENCY_KEY);
    headerParams['Idempotency-Key'] = spec.idempotency === 'required' ? key : key.optional();
  } else if (spec.idempotency) {
    headerParams['Idempotency-Key'] = spec.idempotency === 'required' ? idempotencyKeyRequired : idempotencyKeyOptional;
  }

  const description = [spec.description, spec.scope ? `Scope: \`${spec.scope}\`.` : undefined].filter(Boolean).join('\n\n');
  const responses: ZodOpenApiOperationObject['responses'] = {};
  for (const [status, r] of Object.entries(spec.responses)) {
    responses[status as StatusKey] = {
      description: r.description,
      headers: headers(spec.auth, spec.idempotency ? { 'Idempotent-Replayed': 'IdempotentReplayed' } : {}),
      content: {
        'application/json': { schema: r.schema, ...(r.example === undefined ? {} : { examples: { default: { value: r.example } } }) },
      },
    };
  }
  for (const status of [...errors].sort()) responses[String(status) as StatusKey] = errorResponseOnce(status);

  return {
    operationId: spec.operationId,
    summary: spec.summary,
    ...(description ? { description } : {}),
    tags: [...spec.tags],
    security: SECURITY[spec.auth],
    ...((spec.svcVersion ?? guarded) ? { parameters: [svcVersionParam] } : {}),
    requestParams: {
      ...(spec.path ? { path: spec.path } : {}),
      ...(spec.query ? { query: spec.query } : {}),
      ...(Object.keys(headerParams).length > 0 ? { header: z.object(headerParams) } : {}),
    },
    ...(spec.body
      ? {
          requestBody: {
            required: true,
            ...(spec.body.description ? { description: spec.body.description } : {}),
            content: { 'application/json': { schema: spec.body.schema as z.ZodType, examples: { default: { value: spec.body.example } } } },
          },
        }
      : {}),
    responses,
  };
}
