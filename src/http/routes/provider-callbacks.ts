import type Router from '@koa/router';
import { z } from 'zod';
import getRawBody from 'raw-body';
import { ApiError, notFound } from '../../domain/errors';
import { MALFORMED_CALLBACK, ProviderError, type OfframpProvider, type Payout, type ProviderBankAccount } from '../../offramp/offramp-provider';
import type { ApiState } from '../context';

/** What the service does with a verified provider callback (the bank accounts and payouts modules). */
export interface OfframpCallbackDeps {
  provider: OfframpProvider;
  onPayoutUpdated?(payout: Payout): Promise<void>;
  onBankAccountUpdated?(bankAccountId: string, account: ProviderBankAccount): Promise<void>;
}

/** The answer to a handled callback. */
export const ZCallbackReceived = z.strictObject({ received: z.literal(true) });

/**
 * POST /v2/providers/{providerCode}/callbacks: the off-ramp provider's signed callbacks. Outside the
 * partner router (the provider has no partner credential): the signature is its authentication, and
 * it is checked over the exact bytes before anything is parsed. 2xx once handled; a handler's failure
 * answers 503, so the provider sends it again. A callback is a hint: handlers re-read the provider.
 */
export function registerProviderCallbackRoutes(router: Router<ApiState>, deps: OfframpCallbackDeps & { maxBodyBytes: number }): void {
  router.post('/v2/providers/:providerCode/callbacks', async (ctx) => {
    if (ctx.params.providerCode !== deps.provider.code) throw notFound('Provider');
    let raw: Buffer;
    try {
      raw = await getRawBody(ctx.req, { limit: deps.maxBodyBytes });
    } catch (err) {
      if ((err as { type?: string }).type === 'entity.too.large') throw new ApiError('payload_too_large', `Request body exceeds ${deps.maxBodyBytes} bytes`);
      throw new ApiError('bad_request', 'Could not read the request body');
    }
    let callback;
    try {
      callback = deps.provider.verifyCallback(raw.toString('utf8'), ctx.headers);
    } catch (err) {
      if (err instanceof ProviderError && err.providerCode === MALFORMED_CALLBACK) throw new ApiError('bad_request', 'The callback body is not a callback');
      if (err instanceof ProviderError) throw new ApiError('unauthorized', 'The callback signature is missing, stale or wrong');
      throw err;
    }
    try {
      if (callback.type === 'payout.updated') await deps.onPayoutUpdated?.(callback.payout);
      else await deps.onBankAccountUpdated?.(callback.bankAccountId, callback.account);
    } catch (err) {
      ctx.state.log.error({ type: callback.type, msg: err instanceof Error ? err.message : String(err) }, 'provider callback handler failed');
      throw new ApiError('service_unavailable', 'The callback could not be handled now; send it again');
    }
    ctx.status = 200;
    ctx.body = { received: true } satisfies z.infer<typeof ZCallbackReceived>;
  });
}
