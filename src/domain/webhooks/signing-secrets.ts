import { createHmac } from 'node:crypto';
import { randomToken } from '../ids';
import { openSealedText, sealText } from '../sealed-text';

/**
 * Endpoint signing secrets. A secret is `whsec_` + 43 base62 characters (~256 bits); the HMAC key is
 * the whole string as UTF-8. It is returned once (creation, rotation) and stored only encrypted
 * (src/domain/sealed-text.ts), with the endpoint id as associated data.
 */
const KEY_INFO = 'partner-payments/webhook-endpoint-signing-secret/v1';

export function generateSigningSecret(): string {
  return `whsec_${randomToken(43)}`;
}

export function encryptSigningSecret(serviceSecret: string, endpointId: string, secret: string): string {
  return sealText(serviceSecret, KEY_INFO, endpointId, secret);
}

export class SigningSecretUnreadableError extends Error {
  override name = 'SigningSecretUnreadableError';
}

export function decryptSigningSecret(serviceSecret: string, endpointId: string, stored: string): string {
  const opened = openSealedText(serviceSecret, KEY_INFO, endpointId, stored);
  if (opened instanceof Error) throw new SigningSecretUnreadableError(`endpoint ${endpointId}: signing secret ${opened.message}`, { cause: opened });
  return opened;
}

/** hex HMAC-SHA256 over `<timestamp>.<deliveryId>.<eventId>.<rawBody>`. */
export function signDelivery(secret: string, timestamp: number, deliveryId: string, eventId: string, rawBody: Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.${deliveryId}.${eventId}.`, 'utf8').update(rawBody).digest('hex');
}

export function signatureHeader(timestamp: number, signatureHex: string): string {
  return `t=${timestamp},v1=${signatureHex}`;
}
