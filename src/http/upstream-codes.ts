import type { ErrorCode } from '../domain/requests/errors';

/**
 * One endpoint, one family of upstream codes. Endpoints on Payments (`/v2/payments...`, the client
 * API's `/v2/client/me/payments...`, public creation `/v2/public/apps/{appId}/payments...`) answer
 * `payment_provider_error` (502) and `payment_provider_unavailable` (503); every other endpoint
 * `provider_failure` and `provider_unavailable`. Whichever upstream failed (the off-ramp provider,
 * the chain RPC, the workflow engine, the mail relay), the endpoint decides the code, never the use
 * case: the error handler and the OpenAPI document both ask here.
 */
export type UpstreamFamily = 'payment' | 'service';
/** An upstream that answered with an error or a refusal (502), or could not be reached in time (503). */
export type UpstreamKind = 'error' | 'unavailable';

const CODES = {
  payment: { error: 'payment_provider_error', unavailable: 'payment_provider_unavailable' },
  service: { error: 'provider_failure', unavailable: 'provider_unavailable' },
} as const satisfies Record<UpstreamFamily, Record<UpstreamKind, ErrorCode>>;

const PAYMENT_PATH = /^\/v2\/(payments|client\/me\/payments|public\/apps\/[^/]+\/payments)(\/|$)/;

/** The family of a request path, or of an OpenAPI path template. */
export function upstreamFamily(path: string): UpstreamFamily {
  return PAYMENT_PATH.test(path) ? 'payment' : 'service';
}

export function upstreamCode(family: UpstreamFamily, kind: UpstreamKind): ErrorCode {
  return CODES[family][kind];
}

/** The upstream codes of the other family: an endpoint of `family` never answers them. */
export function foreignUpstreamCodes(family: UpstreamFamily): ErrorCode[] {
  return Object.values(CODES[family === 'payment' ? 'service' : 'payment']);
}
