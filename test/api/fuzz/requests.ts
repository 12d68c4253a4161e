import fc from 'fast-check';
import { basicAuth } from '../../support/api-client';
import { TEST_SERVICE_SECRET } from '../../support/harness';
import { clientSecretFor } from '../../../src/domain/payments/payment-view';
import type { FuzzFixture, RouteModel } from './models';

/** A request as sent: the route it aims at, and what a buggy client made of it. */
export interface FuzzRequest {
  method: string;
  /** Path and query exactly as put on the wire (already percent-encoded where the client encoded). */
  target: string;
  /** An array is the same header sent on several lines. */
  headers: Record<string, string | string[]>;
  body?: string | Uint8Array;
}

/**
 * What a buggy client does to a valid request. Plain data (not closures), so that fast-check prints
 * a failing case readably and shrinks it.
 */
export type Mutation =
  | { m: 'field'; pick: number; value: unknown }
  | { m: 'dropField'; pick: number }
  | { m: 'extraField'; key: string; value: unknown }
  | { m: 'body'; value: unknown }
  | { m: 'rawBody'; body: string | Uint8Array }
  | { m: 'param'; pick: number; value: string; encode: boolean }
  | { m: 'pathShape'; shape: 'trailingSlash' | 'doubleSlash' | 'upperCase' | 'encodeChar' | 'suffix' | 'dotSegment'; pick: number }
  | { m: 'query'; key: string; value: string }
  | { m: 'duplicateQuery'; pick: number; value: string }
  | { m: 'header'; name: string; value: string }
  | { m: 'repeatHeader'; name: string; values: string[] }
  | { m: 'dropHeader'; name: string }
  | { m: 'method'; method: string }
  | {
      m: 'auth';
      variant:
        'none' | 'otherApp' | 'wrongSecret' | 'garbage' | 'bearer' | 'noColon' | 'partnerOnAdmin' | 'adminOnPartner' | 'twoCredentials';
    };

const LONG = 'x'.repeat(5000);
const UNICODE = [
  '\u0000',
  '\ud800',
  '\udfff',
  'a\ud83dz',
  '\u202eevil',
  'שלום',
  '😀👍🏽',
  'e\u0301',
  '\ufeff',
  '\u2028',
  'Ω≈ç',
  '１２３',
  '٣',
  '\u00a0',
  '\u0007',
];

/** Strings a buggy client sends where a string (or an id) is expected. */
const weirdString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    LONG,
    'x'.repeat(300),
    ...UNICODE,
    'null',
    'undefined',
    'true',
    '[]',
    '{}',
    '../../etc/passwd',
    '<script>',
    "' OR 1=1 --",
    '%00',
    '%ZZ',
    '\\',
  ),
  fc.constantFrom(
    'acct_',
    'acct_x',
    'acct_../x',
    'payment_',
    'payment_a b',
    'payment_' + 'a'.repeat(100),
    'deposit_addr_x',
    'wallet_x',
    'whe_',
    'txn_x',
    'app_x',
    'ACCT_X',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
);

/** Numbers and number-ish strings: amounts, chain ids, limits, versions. */
const weirdNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, -0, 1.5, 1e21, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 2 ** 31, 2 ** 63),
  fc.constantFrom(
    '1e3',
    '1E-7',
    '-5',
    '-0.01',
    '0.0000000000000000000001',
    '12.50',
    '00012',
    '1,000',
    'NaN',
    'Infinity',
    '0x10',
    ' 1',
    '1 ',
    '1_000',
    '99999999999999999999999999999999999999',
    '.5',
    '5.',
  ),
  fc.bigInt().map(String),
);

/** Any value of any type where a field was expected. */
const weirdValue: fc.Arbitrary<unknown> = fc.oneof(
  weirdString,
  weirdNumber,
  fc.constantFrom(null, true, false, [], {}, [null], { '': '' }, { __proto__: { x: 1 } }, { constructor: 'x' }),
  fc.jsonValue({ maxDepth: 3 }),
  fc.array(fc.constant(1), { minLength: 100, maxLength: 100 }),
  fc.dictionary(weirdString, fc.constant('v'), { maxKeys: 30 }),
);

/** Whole bodies that are not JSON objects, or not JSON at all. */
const rawBody: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  fc.uint8Array({ maxLength: 200 }),
  fc.constantFrom(
    '',
    '{',
    '{"a":1,}',
    'null',
    '[]',
    '"text"',
    '1e400',
    '{"amount": 1e400, "chainId": 1e400, "expectedVersion": 1e400}',
    '{"chainId": 31337e0}',
    '{"__proto__": {"polluted": true}}',
    '{"a":1,"a":2}',
    '\ufeff{}',
    '{"x":"\\ud800"}',
    '{"x":"\\u0000"}',
    `{"x":"${'\\u0041'.repeat(2000)}"}`,
    `${'['.repeat(5000)}${']'.repeat(5000)}`,
    `{"a":${'{"a":'.repeat(2000)}1${'}'.repeat(2001)}`,
    'a=1&b=2',
  ),
  fc.string({ unit: 'binary', maxLength: 100 }),
  // Over the body limit (MAX_BODY_BYTES, 256 KiB by default).
  fc.constant(`{"pad":"${'p'.repeat(300_000)}"}`),
);

const HEADER_NAMES = [
  'idempotency-key',
  'svc-version',
  'content-type',
  'authorization',
  'x-request-id',
  'accept',
  'content-encoding',
  'x-forwarded-for',
  'cookie',
  'x-http-method-override',
  'x-svc-payment-secret',
] as const;
const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    'a, b',
    'key-1, key-1',
    'x'.repeat(300),
    'x'.repeat(9000),
    'x'.repeat(17_000),
    '2026-09-09',
    '2026-09-09, 2026-09-09',
    '2020-01-01',
    'latest',
    'null',
  ),
  fc.constantFrom(
    'text/plain',
    'application/json; charset=utf-16',
    'application/json; charset=latin1',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/json, text/plain',
    'application/merge-patch+json',
    '*/*',
    'gzip',
    'br',
  ),
  // Header values are bytes: printable latin-1 is the most a client can put there (Node refuses DEL).
  fc.string({
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((c) => c !== 0x7f)
      .map((c) => String.fromCharCode(c)),
    maxLength: 60,
  }),
);

const queryKey = fc.oneof(
  fc.constantFrom(
    'limit',
    'cursor',
    'status',
    'chainId',
    'assetSymbol',
    'externalReference',
    'createdFrom',
    'createdTo',
    'paymentId',
    'endpointId',
    'open',
    'kind',
    '__proto__',
    'constructor',
    '',
  ),
  weirdString,
);
const queryValue = (f: FuzzFixture) =>
  fc.oneof(
    weirdString,
    weirdNumber.map(String),
    fc.constantFrom(
      '0',
      '101',
      '1e2',
      '-1',
      '2.5',
      '9'.repeat(400),
      f.paymentsCursor,
      `${f.paymentsCursor}x`,
      'eyJzIjoieCJ9.00',
      'a.b.c',
      'not-a-cursor',
      '2026-13-45T00:00:00Z',
    ),
  );

export function mutation(f: FuzzFixture): fc.Arbitrary<Mutation> {
  return fc.oneof(
    fc.record({ m: fc.constant('field' as const), pick: fc.nat(), value: weirdValue }),
    fc.record({ m: fc.constant('dropField' as const), pick: fc.nat() }),
    fc.record({
      m: fc.constant('extraField' as const),
      key: fc.oneof(fc.constantFrom('__proto__', 'constructor', 'id', 'status', 'appId'), weirdString),
      value: weirdValue,
    }),
    fc.record({ m: fc.constant('body' as const), value: weirdValue }),
    fc.record({ m: fc.constant('rawBody' as const), body: rawBody }),
    fc.record({ m: fc.constant('param' as const), pick: fc.nat(), value: weirdString, encode: fc.boolean() }),
    fc.record({
      m: fc.constant('pathShape' as const),
      shape: fc.constantFrom('trailingSlash', 'doubleSlash', 'upperCase', 'encodeChar', 'suffix', 'dotSegment'),
      pick: fc.nat(),
    }),
    fc.record({ m: fc.constant('query' as const), key: queryKey, value: queryValue(f) }),
    fc.record({ m: fc.constant('duplicateQuery' as const), pick: fc.nat(), value: queryValue(f) }),
    fc.record({ m: fc.constant('header' as const), name: fc.constantFrom(...HEADER_NAMES), value: headerValue }),
    fc.record({
      m: fc.constant('repeatHeader' as const),
      name: fc.constantFrom(...HEADER_NAMES),
      values: fc.array(headerValue, { minLength: 2, maxLength: 3 }),
    }),
    fc.record({ m: fc.constant('dropHeader' as const), name: fc.constantFrom(...HEADER_NAMES) }),
    fc.record({
      m: fc.constant('method' as const),
      method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'PROPFIND', 'post', 'FOO'),
    }),
    fc.record({
      m: fc.constant('auth' as const),
      variant: fc.constantFrom(
        'none',
        'otherApp',
        'wrongSecret',
        'garbage',
        'bearer',
        'noColon',
        'partnerOnAdmin',
        'adminOnPartner',
        'twoCredentials',
      ),
    }),
  );
}

/** The request being mutated, before it is put on the wire. */
interface Draft {
  method: string;
  template: string;
  params: Array<[string, string]>;
  /** Set once a mutation edits the path itself; then params no longer apply. */
  rawPath?: string;
  query: Array<[string, string]>;
  headers: Record<string, string | string[]>;
  body?: unknown;
  raw?: string | Uint8Array;
}

export function validDraft(route: string, model: RouteModel, f: FuzzFixture, idempotencyKey: string): Draft {
  const [method, template] = route.split(' ') as [string, string];
  const headers: Record<string, string> = {};
  if (model.auth === 'partner') headers.authorization = basicAuth(f.cred.appId, f.cred.appSecret);
  if (model.auth === 'admin') headers.authorization = `Bearer ${f.adminToken}`;
  if (model.auth === 'client') headers.authorization = `Bearer ${f.clientToken}`;
  if (model.paymentSecret) headers['x-svc-payment-secret'] = clientSecretFor(TEST_SERVICE_SECRET, f.paymentId);
  if (model.idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  const draft: Draft = {
    method,
    template,
    params: Object.entries(model.params?.(f) ?? {}),
    query: Object.entries(model.query?.(f) ?? {}),
    headers,
  };
  if (model.body) {
    draft.body = model.body(f);
    headers['content-type'] = 'application/json';
  }
  return draft;
}

/** The paths to every leaf of a JSON body, for field mutations to pick from. */
function leafPaths(value: unknown, path: string[] = []): string[][] {
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    return entries.length === 0 ? [path] : entries.flatMap(([k, v]) => leafPaths(v, [...path, k]));
  }
  return [path];
}

function setAt(root: unknown, path: string[], value: unknown, drop: boolean): unknown {
  if (path.length === 0) return drop ? undefined : value;
  const copy: Record<string, unknown> = Array.isArray(root) ? ([...root] as never) : { ...(root as Record<string, unknown>) };
  const [head, ...rest] = path as [string, ...string[]];
  if (rest.length === 0 && drop) delete copy[head];
  else copy[head] = setAt(copy[head], rest, value, drop);
  return copy;
}

export function applyMutation(d: Draft, mu: Mutation, f: FuzzFixture): Draft {
  const draft: Draft = { ...d, headers: { ...d.headers }, query: [...d.query], params: [...d.params] };
  const path = () => draft.rawPath ?? renderPath(draft);
  switch (mu.m) {
    case 'field':
    case 'dropField': {
      if (draft.body === undefined || draft.raw !== undefined) return draft;
      const leaves = leafPaths(draft.body);
      const at = leaves[mu.pick % leaves.length] ?? [];
      draft.body = setAt(draft.body, at, mu.m === 'field' ? mu.value : undefined, mu.m === 'dropField');
      return draft;
    }
    case 'extraField':
      if (draft.body && typeof draft.body === 'object' && !Array.isArray(draft.body)) {
        draft.body = { ...(draft.body as object), [mu.key]: mu.value };
      } else draft.body = { [mu.key]: mu.value };
      draft.headers['content-type'] ??= 'application/json';
      return draft;
    case 'body':
      draft.body = mu.value;
      draft.raw = undefined;
      draft.headers['content-type'] ??= 'application/json';
      return draft;
    case 'rawBody':
      draft.raw = mu.body;
      draft.headers['content-type'] ??= 'application/json';
      return draft;
    case 'param': {
      if (draft.params.length === 0 || draft.rawPath !== undefined) return draft;
      const i = mu.pick % draft.params.length;
      const [name] = draft.params[i]!;
      // encode false: the client forgot to percent-encode; fetch's URL parser does what it can.
      draft.params[i] = [name, mu.encode ? percentEncode(mu.value) : mu.value];
      return draft;
    }
    case 'pathShape': {
      const p = path();
      const shapes: Record<typeof mu.shape, () => string> = {
        trailingSlash: () => `${p}/`,
        doubleSlash: () => p.replace(/\/(?=[^/]*$)/, '//'),
        upperCase: () => p.toUpperCase(),
        encodeChar: () => {
          const i = 1 + (mu.pick % Math.max(1, p.length - 1));
          return `${p.slice(0, i)}%${p.charCodeAt(i).toString(16).padStart(2, '0').toUpperCase()}${p.slice(i + 1)}`;
        },
        suffix: () => `${p}/extra`,
        dotSegment: () => `${p}/%2e%2e/x`,
      };
      draft.rawPath = shapes[mu.shape]();
      return draft;
    }
    case 'query':
      draft.query.push([mu.key, mu.value]);
      return draft;
    case 'duplicateQuery': {
      const existing = draft.query[mu.pick % Math.max(1, draft.query.length)];
      draft.query.push([existing?.[0] ?? 'limit', mu.value]);
      return draft;
    }
    case 'header':
      draft.headers[mu.name] = mu.value;
      return draft;
    case 'repeatHeader': {
      const first = draft.headers[mu.name];
      draft.headers[mu.name] = [...(typeof first === 'string' ? [first] : []), ...mu.values];
      return draft;
    }
    case 'dropHeader':
      delete draft.headers[mu.name];
      return draft;
    case 'method':
      draft.method = mu.method;
      return draft;
    case 'auth': {
      const partner = basicAuth(f.cred.appId, f.cred.appSecret);
      const variants: Record<typeof mu.variant, string | undefined> = {
        none: undefined,
        otherApp: basicAuth(f.other.appId, f.other.appSecret),
        wrongSecret: basicAuth(f.cred.appId, `${f.cred.appSecret}x`),
        garbage: 'Basic !!!not-base64!!!',
        bearer: `Bearer ${f.cred.appSecret}`,
        noColon: `Basic ${Buffer.from(f.cred.appId).toString('base64')}`,
        partnerOnAdmin: partner,
        adminOnPartner: `Bearer ${f.adminToken}`,
        twoCredentials: `${partner}, Bearer ${f.adminToken}`,
      };
      const value = variants[mu.variant];
      if (value === undefined) delete draft.headers.authorization;
      else draft.headers.authorization = value;
      return draft;
    }
  }
}

function renderPath(d: Draft): string {
  return d.template.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const value = d.params.find(([n]) => n === name)?.[1];
    return value ?? percentEncode(`:${name}`);
  });
}

/**
 * Percent-encodes like encodeURIComponent, but a lone surrogate, which has no UTF-8 form, goes out
 * as the three bytes a careless encoder writes for it (%ED%A0%80 for U+D800): invalid UTF-8.
 */
export function percentEncode(text: string, keep: RegExp = /[A-Za-z0-9\-_.!~*'()]/): string {
  let out = '';
  for (const c of text) {
    const unit = c.charCodeAt(0);
    if (c.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xed, 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else out += keep.test(c) ? c : encodeURIComponent(c);
  }
  return out;
}

/** What a sloppy HTTP library does with an unencoded path: escapes only what can't go on the wire. */
const wireSafe = (path: string) => percentEncode(path, /[\u0021-\u00ff]/);

export function toRequest(d: Draft): FuzzRequest {
  const path = wireSafe(d.rawPath ?? renderPath(d));
  const query = d.query.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&');
  let body: string | Uint8Array | undefined;
  if (d.raw !== undefined) body = d.raw;
  else if (d.body !== undefined) body = JSON.stringify(d.body) ?? 'null';
  return { method: d.method, target: query ? `${path}?${query}` : path, headers: d.headers, body };
}

/** A route's valid request with one to three mutations: a case of the fuzz. */
export function fuzzCase(routes: string[], f: FuzzFixture): fc.Arbitrary<{ route: string; mutations: Mutation[] }> {
  return fc.record({ route: fc.constantFrom(...routes), mutations: fc.array(mutation(f), { minLength: 1, maxLength: 3 }) });
}
