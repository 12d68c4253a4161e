import type { z } from 'zod';
import { ApiError } from './errors';

export type InputLocation = 'body' | 'query' | 'path' | 'header';

/** Parses one part of a request; a failure is a 400 bad_request whose details name each field. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, location: InputLocation): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const fields = result.error.issues.map((issue) => ({
    field: [location, ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
  throw new ApiError('bad_request', `Invalid ${location}: ${fields.map((f) => f.field).join(', ')}`, { fields });
}
