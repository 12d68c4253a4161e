import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Consumer-side verification of a Partner Payments webhook. Self-contained (node:crypto only) so a
 * partner can copy this file as is.
 *
 *   const event = verifyWebhook(rawBody, req.headers, process.env.WEBHOOK_SECRET, { toleranceSeconds: 300 });
 *
 * Verify the raw request bytes, before any JSON parsing or re-serialisation. The signature is
 * `x-svc-signature: t=<unix seconds>,v1=<hex hmac-sha256>` over `<t>.<x-svc-delivery>.<x-svc-event-id>.<rawBody>`
 * keyed with the endpoint's signing secret. After a rotation only the new secret verifies.
 */

export interface WebhookEnvelope<P = Record<string, unknown>> {
  id: string;
  name: string;
  apiVersion: string;
  createdAt: string;
  /** Its place among the events of the resource it is about (1, 2, 3...): order out-of-order deliveries by it. */
  resourceSequence: number;
  payload: P;
}

export type WebhookHeaders = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export type WebhookVerificationErrorCode =
  'missing_header' | 'malformed_signature' | 'timestamp_out_of_tolerance' | 'signature_mismatch' | 'invalid_body';

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';

  constructor(
    readonly code: WebhookVerificationErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface VerifyWebhookOptions {
  /** Largest accepted distance between the signed timestamp and now (default 300 s). */
  toleranceSeconds?: number;
  /** The current time (default: the system clock); for tests and replays. */
  now?: Date | number;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

function required(headers: WebhookHeaders, name: string): string {
  const value = header(headers, name);
  if (!value) throw new WebhookVerificationError('missing_header', `missing ${name} header`);
  return value;
}

/**
 * Verifies the signature and the timestamp, then parses the body. Returns the envelope; throws a
 * WebhookVerificationError (with a `code`) when anything does not hold.
 */
export function verifyWebhook<P = Record<string, unknown>>(
  rawBody: Buffer | string,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): WebhookEnvelope<P> {
  const toleranceSeconds = options.toleranceSeconds ?? 300;
  const signature = required(headers, 'x-svc-signature');
  const timestampHeader = required(headers, 'x-svc-timestamp');
  const deliveryId = required(headers, 'x-svc-delivery');
  const eventId = required(headers, 'x-svc-event-id');

  let t: string | undefined;
  const candidates: string[] = [];
  for (const part of signature.split(',')) {
    const eq = part.indexOf('=');
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') t = value;
    else if (key === 'v1') candidates.push(value);
  }
  if (!t || !/^\d{1,12}$/.test(t) || candidates.length === 0) {
    throw new WebhookVerificationError('malformed_signature', 'x-svc-signature must be t=<timestamp>,v1=<hex>');
  }
  if (t !== timestampHeader.trim()) {
    throw new WebhookVerificationError('malformed_signature', 'x-svc-signature and x-svc-timestamp carry different timestamps');
  }

  const nowMs = options.now === undefined ? Date.now() : typeof options.now === 'number' ? options.now : options.now.getTime();
  if (Math.abs(Math.floor(nowMs / 1000) - Number(t)) > toleranceSeconds) {
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `signature timestamp is more than ${toleranceSeconds} s away from now`,
    );
  }

  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  const expected = createHmac('sha256', secret).update(`${t}.${deliveryId}.${eventId}.`, 'utf8').update(body).digest();
  const matches = candidates.some((candidate) => {
    if (!/^[0-9a-f]{64}$/i.test(candidate)) return false;
    return timingSafeEqual(Buffer.from(candidate, 'hex'), expected);
  });
  if (!matches) throw new WebhookVerificationError('signature_mismatch', 'signature does not match');

  let envelope: unknown;
  try {
    envelope = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('invalid_body', 'body is not JSON');
  }
  const e = envelope as Partial<WebhookEnvelope<P>> | null;
  if (
    typeof e !== 'object' ||
    e === null ||
    typeof e.id !== 'string' ||
    typeof e.name !== 'string' ||
    typeof e.apiVersion !== 'string' ||
    typeof e.createdAt !== 'string' ||
    typeof e.payload !== 'object' ||
    e.payload === null ||
    (e.resourceSequence !== undefined && !Number.isSafeInteger(e.resourceSequence))
  ) {
    throw new WebhookVerificationError('invalid_body', 'body is not an event envelope');
  }
  if (e.id !== eventId) throw new WebhookVerificationError('invalid_body', 'envelope id differs from x-svc-event-id');
  return e as WebhookEnvelope<P>;
}
