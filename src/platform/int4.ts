import { z } from 'zod';

/** The largest value of PostgreSQL's INTEGER (int4): the column of every stored count, version and chain id. */
export const INT4_MAX = 2_147_483_647;

/**
 * An integer an INTEGER column can hold, `min` (default 0) to `max` (default INT4_MAX). Every integer a
 * request carries is one: past int4 it is a 400 naming the field, never a database error.
 */
export function zInt4(bounds: { min?: number; max?: number } = {}) {
  return z
    .number()
    .int()
    .min(bounds.min ?? 0)
    .max(Math.min(bounds.max ?? INT4_MAX, INT4_MAX));
}

/** zInt4 for a query or path parameter, which arrives as a string. */
export function zInt4Param(bounds: { min?: number; max?: number } = {}) {
  return z.coerce
    .number()
    .int()
    .min(bounds.min ?? 0)
    .max(Math.min(bounds.max ?? INT4_MAX, INT4_MAX));
}

/** A chain id, as the chain_id INTEGER columns store it. */
export const ZChainId = zInt4({ min: 1 });
