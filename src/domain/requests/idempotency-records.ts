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
  /** Hex SHA-256 of the raw body alone, which a partner can compute and compare. */
  bodySha256: string;
  /** The key is in a principal's namespace (not the app's own key as sent). */
  namespaced: boolean;
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

export type IdempotencyState = 'in_progress' | 'completed' | 'released';

export interface IdempotencyRecord {
  method: string;
  path: string;
  requestHash: string;
  state: IdempotencyState;
  responseStatus: number | null;
  responseBody: string | null;
  lockedUntil: Date;
}

/** What the app's own lookup of a key reads (never the stored response body itself, only what it is told from it). */
export interface IdempotencyKeyRecord {
  method: string;
  path: string;
  bodySha256: string | null;
  state: IdempotencyState;
  responseStatus: number | null;
  responseBody: string | null;
  lockedUntil: Date;
  createdAt: Date;
  completedAt: Date | null;
  releasedAt: Date | null;
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
    /**
     * True when this request now holds the key: a new key (an INSERT on the primary key: one winner),
     * or a released one taken over in the same statement (a released key is free for any request;
     * the UPDATE's row lock makes one winner). Not ON CONFLICT DO UPDATE: that locks the row on every
     * duplicate too, a write (and a WAL flush) per retry where DO NOTHING only reads.
     */
    async claim(t: IdempotencyTarget): Promise<boolean> {
      const res = await pool.query<{ claimed: boolean }>(
        `WITH inserted AS (
           INSERT INTO idempotency_records (app_id, key, method, path, request_hash, body_sha256, namespaced, state, locked_until)
           VALUES ($1, $2, $3, $4, $5, $6, $7, 'in_progress', $8) ON CONFLICT DO NOTHING RETURNING 1
         ), taken AS (
           UPDATE idempotency_records SET method = $3, path = $4, request_hash = $5, body_sha256 = $6, namespaced = $7,
             state = 'in_progress', locked_until = $8, created_at = now(), released_at = NULL,
             response_status = NULL, response_body = NULL, completed_at = NULL
            WHERE app_id = $1 AND key = $2 AND state = 'released' RETURNING 1
         )
         SELECT EXISTS (SELECT 1 FROM inserted) OR EXISTS (SELECT 1 FROM taken) AS claimed`,
        [t.appId, t.key, t.method, t.path, t.requestHash, t.bodySha256, t.namespaced, lockUntil()],
      );
      return res.rows[0]?.claimed === true;
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

    /** The app's own key as it sent it: a namespaced key (a principal's) is never found here. */
    async lookup(appId: string, key: string): Promise<IdempotencyKeyRecord | null> {
      const res = await pool.query<IdempotencyKeyRecord>(
        `SELECT method, path, body_sha256 AS "bodySha256", state, response_status AS "responseStatus",
                response_body AS "responseBody", locked_until AS "lockedUntil", created_at AS "createdAt",
                completed_at AS "completedAt", released_at AS "releasedAt"
           FROM idempotency_records WHERE app_id = $1 AND key = $2 AND NOT namespaced`,
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

    /**
     * Frees the key for a retry (the request failed for a reason of ours, or was refused before it ran).
     * The row stays, released, so a lookup can say so; the next claim of the key takes it over.
     */
    async release(t: IdempotencyTarget): Promise<void> {
      await pool.query(
        `UPDATE idempotency_records SET state = 'released', released_at = now()
          WHERE app_id = $1 AND key = $2 AND state = 'in_progress'`,
        [t.appId, t.key],
      );
    },
  };
}

export type IdempotencyRecords = ReturnType<typeof idempotencyRecords>;
