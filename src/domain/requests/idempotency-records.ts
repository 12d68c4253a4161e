import type pg from 'pg';
import { z } from 'zod';
import { ApiError } from './errors';

/**
 * Every Idempotency-Key, on every endpoint that takes one: 1-256 printable ASCII characters. The
 * one schema the middleware validates with and the document publishes (public creation narrows it).
 */
export const ZIdempotencyKey = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[ -~]+$/, 'printable ASCII only');

/** One request's claim on an Idempotency-Key: the app's key, and what the request was. */
export interface IdempotencyTarget {
  appId: string;
  key: string;
  method: string;
  path: string;
  requestHash: string;
}

/**
 * The key a create runs under and its request's hash (method, path, exact body), as the middleware
 * claimed them. A create records both on what it makes: a 5xx releases the key, and the identical
 * retry must find that and finish it, while another request under the released key must not get it.
 */
export interface IdempotentRequest {
  key: string;
  requestHash: string;
}

/**
 * What a create recorded under `request.key` answers the retry only if this very request made it:
 * another request under the released key is refused as the middleware refuses one under a held key.
 */
export function assertSameRequest(recordedHash: string | null, request: IdempotentRequest): void {
  if (recordedHash !== request.requestHash) {
    throw new ApiError('idempotency_conflict', 'This Idempotency-Key was already used with a different request');
  }
}

export interface IdempotencyRecord {
  method: string;
  path: string;
  requestHash: string;
  state: string;
  responseStatus: number | null;
  responseBody: string | null;
  lockedUntil: Date;
}

/** How long a claimed key stays locked; a process that died mid-request frees it after this. */
const LOCK_MS = 60_000;

/**
 * The idempotency_records table, in plain SQL on the pool: it is on every create's path, and a
 * single-row statement costs a fraction of an ORM query here (as profiled).
 */
export function idempotencyRecords(pool: pg.Pool) {
  const lockUntil = () => new Date(Date.now() + LOCK_MS);
  return {
    /** True when this request now holds the key (an INSERT on the primary key: one winner). */
    async claim(t: IdempotencyTarget): Promise<boolean> {
      const res = await pool.query(
        `INSERT INTO idempotency_records (app_id, key, method, path, request_hash, state, locked_until)
         VALUES ($1, $2, $3, $4, $5, 'in_progress', $6) ON CONFLICT DO NOTHING`,
        [t.appId, t.key, t.method, t.path, t.requestHash, lockUntil()],
      );
      return res.rowCount === 1;
    },

    async find(appId: string, key: string): Promise<IdempotencyRecord | null> {
      const res = await pool.query<IdempotencyRecord>(
        `SELECT method, path, request_hash AS "requestHash", state, response_status AS "responseStatus",
                response_body AS "responseBody", locked_until AS "lockedUntil"
           FROM idempotency_records WHERE app_id = $1 AND key = $2`,
        [appId, key],
      );
      return res.rows[0] ?? null;
    },

    /** Takes over a key whose holder's lock ran out (it died mid-request). */
    async takeOverExpired(t: IdempotencyTarget, lockedUntil: Date): Promise<boolean> {
      if (lockedUntil.getTime() > Date.now()) return false;
      const res = await pool.query(
        `UPDATE idempotency_records SET locked_until = $4
          WHERE app_id = $1 AND key = $2 AND state = 'in_progress' AND locked_until = $3`,
        [t.appId, t.key, lockedUntil, lockUntil()],
      );
      return res.rowCount === 1;
    },

    async complete(t: IdempotencyTarget, status: number, body: unknown): Promise<void> {
      await pool.query(
        `UPDATE idempotency_records SET state = 'completed', response_status = $3, response_body = $4, completed_at = now()
          WHERE app_id = $1 AND key = $2`,
        [t.appId, t.key, status, JSON.stringify(body)],
      );
    },

    /** Frees the key for a retry (the request failed for a reason of ours). */
    async release(t: IdempotencyTarget): Promise<void> {
      await pool.query(`DELETE FROM idempotency_records WHERE app_id = $1 AND key = $2 AND state = 'in_progress'`, [t.appId, t.key]);
    },
  };
}

export type IdempotencyRecords = ReturnType<typeof idempotencyRecords>;
