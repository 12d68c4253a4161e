import { z } from 'zod';
import { ApiError } from './errors';

/** The body of a command without parameters: an empty JSON object (or no body at all). */
export const ZEmptyBody = z.strictObject({});

export type InputLocation = 'body' | 'query' | 'path' | 'header';

/**
 * 400 bad_request for what the request itself says (its body, query, path or headers, checked against
 * a schema or the static configuration), found before anything ran. An Idempotency-Key is not spent
 * on it: the idempotency middleware releases the key, so the corrected request runs under it.
 */
export class InputError extends ApiError {
  constructor(message: string, fields: Array<{ field: string; message: string }>) {
    super('bad_request', message, { fields });
  }
}

// NUL (PostgreSQL text can't hold it) and UTF-16 surrogates without their pair (not Unicode: UTF-8
// can't encode them faithfully).
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/**
 * No request part is nested deeper than this (the deepest schema needs a handful of levels); past it
 * a body is refused before anything walks it recursively (a 2,000-deep body overflowed the stack).
 */
export const MAX_INPUT_DEPTH = 32;

/** The path to the first object or array nested deeper than maxDepth, found without recursion. */
export function tooDeep(value: unknown, maxDepth: number = MAX_INPUT_DEPTH): string[] | undefined {
  const pending: Array<[unknown, string[]]> = [[value, []]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [v, path] = next;
    if (!v || typeof v !== 'object') continue;
    if (path.length >= maxDepth) return path;
    for (const [k, child] of Object.entries(v)) pending.push([child, [...path, k]]);
  }
  return undefined;
}

/** The paths of every string (value or object key), at any depth, that can't be stored faithfully. */
export function unstorableText(value: unknown, path: string[] = []): string[][] {
  if (typeof value === 'string') return UNSTORABLE.test(value) ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((v, i) => unstorableText(v, [...path, String(i)]));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => {
      const at = [...path, k.replace(UNSTORABLE_ALL, '\uFFFD')];
      return UNSTORABLE.test(k) ? [at] : unstorableText(v, at);
    });
  }
  return [];
}

/**
 * Refuses text nothing can store (NUL, a lone surrogate) and nesting past MAX_INPUT_DEPTH, as a 400
 * bad_request naming each field. parseInput runs it on every request part; a part validated by
 * other means (a bank account's JSON Schema) runs it first too.
 */
export function checkStorable(value: unknown, location: InputLocation): void {
  const deep = tooDeep(value);
  if (deep) {
    const field = [location, ...deep.map((k) => k.replace(UNSTORABLE_ALL, '\uFFFD'))].join('.');
    throw new InputError(`Invalid ${location}: nested deeper than ${MAX_INPUT_DEPTH} levels`, [
      { field, message: `nesting is at most ${MAX_INPUT_DEPTH} levels` },
    ]);
  }
  const unstorable = unstorableText(value);
  if (unstorable.length > 0) {
    const fields = unstorable.map((p) => ({
      field: [location, ...p].join('.'),
      message: 'text with a NUL character or an unpaired UTF-16 surrogate cannot be stored',
    }));
    throw new InputError(`Invalid ${location}: ${fields.map((f) => f.field).join(', ')}`, fields);
  }
}

/**
 * Parses one part of a request; a failure is a 400 bad_request whose details name each field. Every
 * request part passes here, so checkStorable's refusals happen here, once, before any schema or
 * route sees them.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, location: InputLocation): z.output<S> {
  checkStorable(value, location);
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const fields = result.error.issues.map((issue) => ({
    field: [location, ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
  throw new InputError(`Invalid ${location}: ${fields.map((f) => f.field).join(', ')}`, fields);
}
