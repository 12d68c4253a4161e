import { z } from 'zod';
import { withDecimalStrings } from '../values/json-text';

/**
 * The one table from error code to HTTP status. Codes from the spec's Errors section, plus the few
 * the spec leaves "not shown" (see docs/decisions/api-conventions.md).
 */
export const ERROR_STATUS = {
  bad_request: 400,
  api_version_mismatch: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  idempotency_conflict: 409,
  request_in_progress: 409,
  payment_quote_expired: 409,
  payment_not_open: 409,
  payment_not_cancelable: 409,
  version_conflict: 409,
  account_already_exists: 409,
  conflict: 409,
  settlement_profile_missing: 409,
  webhook_endpoint_archived: 409,
  webhook_delivery_not_abandoned: 409,
  approval_code_expired: 409,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  payment_method_not_supported: 422,
  payment_amount_below_minimum: 422,
  payment_amount_above_maximum: 422,
  webhook_destination_not_allowed: 422,
  approval_code_invalid: 422,
  chain_config_missing: 424,
  rate_limited: 429,
  headers_too_large: 431,
  internal_error: 500,
  payment_provider_error: 502,
  provider_failure: 502,
  payment_provider_unavailable: 503,
  provider_unavailable: 503,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

const MAX_MESSAGE = 1000;

/** The spec's error envelope: every refusal of the service has this body. */
export const ZErrorBody = z.strictObject({
  error: z.strictObject({
    code: z.string().min(1).max(128),
    message: z.string().min(1).max(MAX_MESSAGE),
    details: z.unknown().optional(),
  }),
});
export type TErrorBody = z.infer<typeof ZErrorBody>;

export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }

  toBody(): TErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        // Details may carry amounts: as decimal strings, so the body always serializes.
        ...(this.details === undefined ? {} : { details: withDecimalStrings(this.details) }),
      },
    };
  }
}

export const notFound = (what: string): ApiError => new ApiError('not_found', `${what} not found`);

/**
 * An upstream a use case depends on (the off-ramp provider, the mail relay) refused or answered with
 * an error ('error', 502), or could not be reached in time ('unavailable', 503). It carries no code:
 * the endpoint's family names it (src/http/upstream-codes.ts), so one endpoint answers one family.
 * Nothing was created: a retry with the same Idempotency-Key runs again.
 */
export class UpstreamFailure extends Error {
  constructor(
    readonly kind: 'error' | 'unavailable',
    message: string,
    readonly details?: unknown,
    /** Seconds a caller waits before retrying an 'unavailable' (default: the error handler's). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'UpstreamFailure';
  }
}
