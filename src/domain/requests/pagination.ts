import { z } from 'zod';
import { hmacHex, safeEqual } from '../../platform/secrets';
import { anyKey, currentKey, type ServiceSecret } from '../keys/service-keys';
import { ApiError } from './errors';
import { zInt4Param } from '../../platform/int4';

/**
 * Opaque cursors: base64url(JSON position) + "." + HMAC. The HMAC makes a tampered or forged cursor
 * a clean 400 instead of an odd page; the scope binds a cursor to the list (and filters) it came from.
 */
export interface CursorCodec {
  encode(scope: string, position: Record<string, string | number>): string;
  decode(scope: string, cursor: string): Record<string, string | number>;
}

const ZPosition = z.object({ s: z.string(), p: z.record(z.string(), z.union([z.string(), z.number()])) });

/** Signed under the keyring's current key; a cursor signed under any accepted key still reads. */
export function createCursorCodec(secret: ServiceSecret): CursorCodec {
  const signUnder = (key: string, payload: string) => hmacHex(key, `cursor:${payload}`).slice(0, 32);
  const sign = (payload: string) => signUnder(currentKey(secret), payload);
  return {
    encode(scope, position) {
      const payload = Buffer.from(JSON.stringify({ s: scope, p: position })).toString('base64url');
      return `${payload}.${sign(payload)}`;
    },
    decode(scope, cursor) {
      const invalid = new ApiError('bad_request', 'Invalid cursor: pass back nextCursor exactly as returned', {
        fields: [{ field: 'query.cursor', message: 'Invalid cursor' }],
      });
      const [payload, mac, extra] = cursor.split('.');
      if (!payload || !mac || extra !== undefined || !anyKey(secret, (key) => safeEqual(signUnder(key, payload), mac))) throw invalid;
      let decoded: unknown;
      try {
        decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        throw invalid;
      }
      const parsed = ZPosition.safeParse(decoded);
      if (!parsed.success || parsed.data.s !== scope) throw invalid;
      return parsed.data.p;
    },
  };
}

/** A cursor as encode() writes it; the signature is checked on decode (another value of this shape is still 400). */
export const CURSOR_PATTERN = /^[A-Za-z0-9_-]+\.[0-9a-f]{32}$/;

/** The `cursor` query parameter of every list: a nextCursor exactly as a page returned it. */
export const ZCursor = z
  .string()
  .max(2048)
  .regex(CURSOR_PATTERN, 'a nextCursor exactly as returned')
  .meta({ description: "Opaque and signed: pass back a page's nextCursor exactly as returned." });

/** The query parameters every list takes; each list sets its own maximum and default. */
export function ZPageQuery(opts: { max: number; default: number }) {
  return z.object({
    limit: zInt4Param({ min: 1, max: opts.max }).default(opts.default),
    cursor: ZCursor.optional(),
  });
}

/**
 * Keyset paging over (createdAt desc, id desc). Fetches limit+1 rows to know whether there is a next page.
 */
export function pageOf<T extends { id: string; createdAt: Date }>(
  rows: T[],
  limit: number,
  codec: CursorCodec,
  scope: string,
): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  const nextCursor = rows.length > limit && last ? codec.encode(scope, { t: last.createdAt.toISOString(), id: last.id }) : null;
  return { items, nextCursor };
}

/**
 * The Prisma where-clause continuing after a decoded position (createdAt desc, id desc): rows before
 * (t, id). Written as `createdAt <= t AND (createdAt < t OR id < id)`, not as the plain
 * `createdAt < t OR (createdAt = t AND id < id)`: PostgreSQL can't start an index range at an OR, so
 * that form scanned the list's index from its newest row and filtered every row newer than the cursor
 * away (a page half-way down 1M rows read 500k). The `<=` bound is the index range's start; the OR only
 * drops the few rows that share t. (A row comparison `(created_at, id) < (t, id)` is what Prisma can't write.)
 */
export function afterPosition(position: Record<string, string | number> | undefined) {
  if (!position) return {};
  const t = new Date(String(position.t));
  const id = String(position.id);
  if (Number.isNaN(t.getTime())) throw new ApiError('bad_request', 'Invalid cursor');
  return { createdAt: { lte: t }, OR: [{ createdAt: { lt: t } }, { id: { lt: id } }] };
}
