import { createHmac } from 'node:crypto';
import { randomToken } from '../values/ids';
import { openSealedText, sealText } from '../keys/sealed-text';
import type { ServiceSecret } from '../keys/service-keys';

/**
 * Endpoint signing secrets. A secret is `whsec_` + 43 base62 characters (~256 bits); the HMAC key is
 * the whole string as UTF-8. It is returned once (creation, rotation) and stored only encrypted
 * (src/domain/keys/sealed-text.ts), with the endpoint id as associated data.
 */
export const SIGNING_SECRET_LABEL = 'partner-payments/webhook-endpoint-signing-secret/v1';

export function generateSigningSecret(): string {
  return `whsec_${randomToken(43)}`;
}

export function encryptSigningSecret(serviceSecret: ServiceSecret, endpointId: string, secret: string): string {
  return sealText(serviceSecret, SIGNING_SECRET_LABEL, endpointId, secret);
}

export class SigningSecretUnreadableError extends Error {
  override name = 'SigningSecretUnreadableError';
}

export function decryptSigningSecret(serviceSecret: ServiceSecret, endpointId: string, stored: string): string {
  const opened = openSealedText(serviceSecret, SIGNING_SECRET_LABEL, endpointId, stored);
  if (opened instanceof Error)
    throw new SigningSecretUnreadableError(`endpoint ${endpointId}: signing secret ${opened.message}`, { cause: opened });
  return opened;
}

/** hex HMAC-SHA256 over `<timestamp>.<deliveryId>.<eventId>.<rawBody>`. */
export function signDelivery(secret: string, timestamp: number, deliveryId: string, eventId: string, rawBody: Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.${deliveryId}.${eventId}.`, 'utf8').update(rawBody).digest('hex');
}

export function signatureHeader(timestamp: number, signatureHex: string): string {
  return `t=${timestamp},v1=${signatureHex}`;
}
