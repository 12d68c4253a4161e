import { lookupIdempotencyKey, ZIdempotencyKeyPath } from '../../domain/requests/idempotency-keys';
import type { IdempotencyRecords } from '../../domain/requests/idempotency-records';
import { InputError, parseInput } from '../../domain/requests/validation';
import { requireApp, type ApiContext, type ApiRouter } from '../context';

const PREFIX = '/v2/idempotency-keys/';

/**
 * The router takes a segment that isn't valid percent-encoded UTF-8 (a careless client's %E9) as
 * literal text, which would look up another key than the one meant: refused instead.
 */
function assertDecodable(ctx: ApiContext): void {
  try {
    decodeURIComponent(ctx.path.slice(PREFIX.length));
  } catch {
    throw new InputError('Invalid path: key', [{ field: 'path.key', message: 'percent-encode the key as UTF-8' }]);
  }
}

/**
 * The app's own Idempotency-Keys: any valid credential may look up its app's keys, whatever its scopes
 * (a key spans every module; the answer is what the app's own request was and got).
 */
export function registerIdempotencyKeyRoutes(router: ApiRouter, deps: { idempotency: IdempotencyRecords }): void {
  router.get('/v2/idempotency-keys/:key', async (ctx) => {
    assertDecodable(ctx);
    const { key } = parseInput(ZIdempotencyKeyPath, ctx.params, 'path');
    ctx.body = await lookupIdempotencyKey(deps.idempotency, requireApp(ctx).id, key);
  });
}
