import { sha256Hex } from '../../platform/secrets';
import type { ApiContext, ApiMiddleware } from '../context';
import { requireApp } from '../context';
import { ApiError } from '../../domain/requests/errors';
import { InputError, parseInput } from '../../domain/requests/validation';
import { API_CRASH_POINTS, crashPoint } from '../../platform/crash-points';
import { z } from 'zod';
import { ZIdempotencyKey, type IdempotencyRecords } from '../../domain/requests/idempotency-records';
import { timed } from '../../platform/step-timing';

export { ZIdempotencyKey };

const IDEMPOTENCY_KEY = 'Idempotency-Key';

export interface IdempotencyOptions {
  required: boolean;
  /**
   * Turns the response body into what is stored, and back on replay. Lets a route keep a secret
   * (e.g. checkout.clientSecret) out of the stored copy while replays still return it.
   */
  seal?: (body: unknown, ctx: ApiContext) => unknown;
  unseal?: (stored: unknown) => unknown;
  /**
   * Keys are per app; a route used by many principals of one app (the client API's accounts) puts
   * each principal's keys in its own namespace, so one account can never replay another's response.
   */
  namespace?: (ctx: ApiContext) => string;
  /** A refusal that is not the key's final answer (the world may change: a transaction gets mined): the key is released. */
  releaseOn?: (err: ApiError) => boolean;
}

/**
 * Whether a refusal is the key's answer. Only a request that started executing owns its key (Stripe's
 * rule): a refusal of what the request itself says (InputError: its shape, or the static configuration
 * it names: 424) or of a resource that isn't the caller's (404: ids are the service's, so the identical
 * retry re-runs into the same 404) releases it, so the corrected request runs under the same key.
 * A 403 never gets here (scopes are checked before the key). What a running request refused for the
 * world's state (409, 422, a 400 found against it) is final: the identical retry gets it replayed.
 */
function refusalOwnsKey(err: ApiError, options: IdempotencyOptions): boolean {
  if (err.status >= 500 || err instanceof InputError || err.status === 404 || err.status === 424) return false;
  // A conflict found behind the key: the key belongs to the request that made the resource.
  return err.code !== 'idempotency_conflict' && !options.releaseOn?.(err);
}

/**
 * Idempotency-Key: the first request with a key runs; an identical retry (same key, method, path and
 * byte-identical body) gets the stored status and body; anything else with that key is a conflict.
 * The key is claimed by an INSERT on its primary key, so concurrent duplicates can't both run.
 */
export function idempotent(records: IdempotencyRecords, options: IdempotencyOptions): ApiMiddleware {
  return async (ctx, next) => {
    // Sent empty is sent: it is refused like any other malformed key, never taken as no key.
    if (ctx.headers['idempotency-key'] === undefined) {
      if (options.required) {
        throw new ApiError('bad_request', 'The Idempotency-Key header is required on this endpoint', {
          fields: [{ field: `header.${IDEMPOTENCY_KEY}`, message: 'Required' }],
        });
      }
      return next();
    }
    const parsed = readIdempotencyKey(ctx, ZIdempotencyKey);
    const key = options.namespace ? `${options.namespace(ctx)}:${parsed}` : parsed;
    const app = requireApp(ctx);
    const rawBody = ctx.state.rawBody ?? Buffer.alloc(0);
    const requestHash = sha256Hex(Buffer.concat([Buffer.from(`${ctx.method} ${ctx.path}\n`), rawBody]));
    const target = {
      appId: app.id,
      key,
      method: ctx.method,
      path: ctx.path,
      requestHash,
      bodySha256: sha256Hex(rawBody),
      namespaced: options.namespace !== undefined,
    };

    if (!(await timed('idempotency_claim', () => records.claim(target)))) {
      const record = await records.find(app.id, key);
      // Released between the claim and this read: another request is taking it over.
      if (!record || record.state === 'released') {
        throw new ApiError('request_in_progress', 'A request with this Idempotency-Key is still running');
      }
      if (record.method !== ctx.method || record.path !== ctx.path || record.requestHash !== requestHash) {
        throw new ApiError('idempotency_conflict', 'This Idempotency-Key was already used with a different request');
      }
      if (record.state === 'completed' && record.responseStatus !== null && record.responseBody !== null) {
        const stored: unknown = JSON.parse(record.responseBody);
        ctx.status = record.responseStatus;
        ctx.body = options.unseal ? options.unseal(stored) : stored;
        ctx.set('Idempotent-Replayed', 'true');
        return;
      }
      if (!(await records.takeOverExpired(target, record.lockedUntil))) {
        throw new ApiError(
          'request_in_progress',
          'A request with this Idempotency-Key is still running; read the resource instead of retrying',
        );
      }
    }

    ctx.state.idempotency = { key, requestHash };
    try {
      await next();
    } catch (err) {
      // A final refusal is the answer for this key; anything else (a fault too) releases it so a retry runs.
      if (err instanceof ApiError && refusalOwnsKey(err, options)) {
        await records.complete(target, err.status, err.toBody());
      } else {
        await records.release(target);
      }
      throw err;
    }
    crashPoint(API_CRASH_POINTS.beforeIdempotencyComplete);
    if (ctx.status < 500) {
      const stored = options.seal ? options.seal(ctx.body, ctx) : ctx.body;
      await timed('idempotency_complete', () => records.complete(target, ctx.status, stored));
    } else {
      await records.release(target);
    }
  };
}

/** The request's Idempotency-Key parsed with `schema` (ZIdempotencyKey or a narrowing of it); a 400 names header.Idempotency-Key. */
export function readIdempotencyKey(ctx: ApiContext, schema: z.ZodType<string>): string {
  return parseInput(z.object({ [IDEMPOTENCY_KEY]: schema }), { [IDEMPOTENCY_KEY]: ctx.get(IDEMPOTENCY_KEY) }, 'header')[
    IDEMPOTENCY_KEY
  ] as string;
}
