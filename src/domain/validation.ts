import type { z } from 'zod';
import { ApiError } from './errors';

export type InputLocation = 'body' | 'query' | 'path' | 'header';

// NUL (PostgreSQL text can't hold it) and UTF-16 surrogates without their pair (not Unicode: UTF-8
// can't encode them faithfully).
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

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
 * Parses one part of a request; a failure is a 400 bad_request whose details name each field. Every
 * request part passes here, so text nothing can store (NUL, a lone surrogate) is refused here, once,
 * before any schema or route sees it.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, location: InputLocation): z.output<S> {
  const unstorable = unstorableText(value);
  if (unstorable.length > 0) {
    const fields = unstorable.map((p) => ({
      field: [location, ...p].join('.'),
      message: 'text with a NUL character or an unpaired UTF-16 surrogate cannot be stored',
    }));
    throw new ApiError('bad_request', `Invalid ${location}: ${fields.map((f) => f.field).join(', ')}`, { fields });
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const fields = result.error.issues.map((issue) => ({
    field: [location, ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
  throw new ApiError('bad_request', `Invalid ${location}: ${fields.map((f) => f.field).join(', ')}`, { fields });
}
