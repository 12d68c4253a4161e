import { z } from 'zod';
import { ZIdempotencyKey, type IdempotencyKeyRecord, type IdempotencyRecords } from './idempotency-records';

/**
 * An app's own Idempotency-Key as a partner looks it up (GET /v2/idempotency-keys/{key}): whether a
 * request that timed out ran, so the partner knows whether to retry without retrying. It tells what
 * the stored answer was (status, resource id), never the stored body itself.
 */
export const IDEMPOTENCY_KEY_STATUSES = ['unknown', 'in_flight', 'completed', 'released'] as const;

export const ZIdempotencyKeyPath = z.strictObject({ key: ZIdempotencyKey });

const ZTimestamp = z.iso.datetime().nullable();

export const ZIdempotencyKeyView = z.strictObject({
  object: z.literal('idempotency_key'),
  key: ZIdempotencyKey,
  status: z.enum(IDEMPOTENCY_KEY_STATUSES).meta({
    description:
      'unknown: no request used the key. in_flight: a request holds it (until lockExpiresAt; after that the identical request takes it over). completed: its answer is stored and an identical retry replays it. released: the request failed or was refused before it ran; any request may use the key.',
  }),
  request: z
    .strictObject({
      method: z.string(),
      path: z.string(),
      bodySha256: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .nullable()
        .meta({ description: 'Hex SHA-256 of the raw request body bytes (null for keys used before it was recorded).' }),
    })
    .nullable()
    .meta({ description: 'The request that holds, completed or last released the key; null when unknown.' }),
  response: z
    .strictObject({
      status: z.number().int().min(100).max(599),
      resourceId: z.string().nullable().meta({
        description:
          "The id of the resource the answer carries (its top-level id, else its first top-level object's id); null for an error.",
      }),
    })
    .nullable()
    .meta({ description: 'The stored answer; only when completed.' }),
  createdAt: ZTimestamp.meta({ description: 'When the request that holds, completed or last released the key claimed it.' }),
  completedAt: ZTimestamp,
  releasedAt: ZTimestamp,
  lockExpiresAt: ZTimestamp.meta({ description: 'Only when in_flight: after it, the identical request takes the key over and runs.' }),
});
export type TIdempotencyKeyView = z.output<typeof ZIdempotencyKeyView>;

const STATUS_OF = { in_progress: 'in_flight', completed: 'completed', released: 'released' } as const;

/** The resource an answer carries: its top-level `id`, else the `id` of its first top-level object that has one. */
export function resourceIdOf(body: unknown): string | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null;
  const record = body as Record<string, unknown>;
  if (typeof record.id === 'string') return record.id;
  for (const value of Object.values(record)) {
    const id = value && typeof value === 'object' ? (value as Record<string, unknown>).id : undefined;
    if (typeof id === 'string') return id;
  }
  return null;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

/** The view of a key from its record (null: no request of the app used it as sent). */
export function toIdempotencyKeyView(key: string, record: IdempotencyKeyRecord | null): TIdempotencyKeyView {
  if (!record) {
    const never = { createdAt: null, completedAt: null, releasedAt: null, lockExpiresAt: null };
    return { object: 'idempotency_key', key, status: 'unknown', request: null, response: null, ...never };
  }
  const status = STATUS_OF[record.state];
  const completed = status === 'completed' && record.responseStatus !== null;
  return {
    object: 'idempotency_key',
    key,
    status,
    request: { method: record.method, path: record.path, bodySha256: record.bodySha256 },
    response: completed
      ? { status: record.responseStatus!, resourceId: resourceIdOf(record.responseBody === null ? null : JSON.parse(record.responseBody)) }
      : null,
    createdAt: iso(record.createdAt),
    completedAt: status === 'completed' ? iso(record.completedAt) : null,
    releasedAt: status === 'released' ? iso(record.releasedAt) : null,
    lockExpiresAt: status === 'in_flight' ? iso(record.lockedUntil) : null,
  };
}

/** The app's own key as it sent it (never another app's, nor one kept in a principal's namespace). */
export async function lookupIdempotencyKey(records: IdempotencyRecords, appId: string, key: string): Promise<TIdempotencyKeyView> {
  return toIdempotencyKeyView(key, await records.lookup(appId, key));
}
