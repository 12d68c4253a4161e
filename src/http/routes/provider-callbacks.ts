import type Router from '@koa/router';
import { z } from 'zod';
import getRawBody from 'raw-body';
import { ApiError, notFound } from '../../domain/requests/errors';
import { MALFORMED_CALLBACK, ProviderError } from '../../offramp/offramp-provider';
import { followProviderCallback, type OfframpCallbackDeps } from '../../domain/bank-accounts/provider-callbacks';
import type { ApiState } from '../context';

/** The answer to a handled callback. */
export const ZCallbackReceived = z.strictObject({ received: z.literal(true) });

/**
 * POST /v2/providers/{providerCode}/callbacks: the off-ramp provider's signed callbacks. Outside the
 * partner router (the provider has no partner credential): the signature is its authentication, and
 * it is checked over the exact bytes before anything is parsed. A callback is a hint: what it names is
 * read from the provider and that answer is applied (src/domain/bank-accounts/provider-callbacks.ts). 2xx once
 * handled; a failed read or handler answers 503, so the provider sends it again.
 */
export function registerProviderCallbackRoutes(router: Router<ApiState>, deps: OfframpCallbackDeps & { maxBodyBytes: number }): void {
  router.post('/v2/providers/:providerCode/callbacks', async (ctx) => {
    if (ctx.params.providerCode !== deps.provider.code) throw notFound('Provider');
    let raw: Buffer;
    try {
      raw = await getRawBody(ctx.req, { limit: deps.maxBodyBytes });
    } catch (err) {
      if ((err as { type?: string }).type === 'entity.too.large')
        throw new ApiError('payload_too_large', `Request body exceeds ${deps.maxBodyBytes} bytes`);
      throw new ApiError('bad_request', 'Could not read the request body');
    }
    let callback;
    try {
      callback = deps.provider.verifyCallback(raw.toString('utf8'), ctx.headers);
    } catch (err) {
      if (err instanceof ProviderError && err.providerCode === MALFORMED_CALLBACK)
        throw new ApiError('bad_request', 'The callback body is not a callback');
      if (err instanceof ProviderError) throw new ApiError('unauthorized', 'The callback signature is missing, stale or wrong');
      throw err;
    }
    try {
      const outcome = await followProviderCallback(deps, callback);
      if (outcome !== 'applied') ctx.state.log.warn({ type: callback.type, outcome }, 'provider callback named nothing to apply');
    } catch (err) {
      ctx.state.log.error(
        { type: callback.type, msg: err instanceof Error ? err.message : String(err) },
        'provider callback handler failed',
      );
      throw new ApiError('service_unavailable', 'The callback could not be handled now; send it again');
    }
    ctx.status = 200;
    ctx.body = { received: true } satisfies z.infer<typeof ZCallbackReceived>;
  });
}
