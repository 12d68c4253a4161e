import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { randomToken } from '../ids';

/**
 * Endpoint signing secrets. A secret is `whsec_` + 43 base62 characters (~256 bits); the HMAC key is
 * the whole string as UTF-8. It is returned once (creation, rotation) and stored only encrypted:
 * AES-256-GCM under a key derived from SERVICE_SECRET with HKDF-SHA256, a random 96-bit IV per
 * encryption, and the endpoint id as associated data, so a ciphertext copied onto another endpoint's
 * row does not decrypt. Stored form: `v1.<iv>.<tag>.<ciphertext>` (base64url parts).
 */
const KEY_INFO = 'partner-payments/webhook-endpoint-signing-secret/v1';
const FORMAT = 'v1';

export function generateSigningSecret(): string {
  return `whsec_${randomToken(43)}`;
}

const keys = new Map<string, Buffer>();

function keyFor(serviceSecret: string): Buffer {
  let key = keys.get(serviceSecret);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', Buffer.from(serviceSecret, 'utf8'), Buffer.alloc(0), KEY_INFO, 32));
    keys.set(serviceSecret, key);
  }
  return key;
}

export function encryptSigningSecret(serviceSecret: string, endpointId: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(serviceSecret), iv);
  cipher.setAAD(Buffer.from(endpointId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [FORMAT, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
}

export class SigningSecretUnreadableError extends Error {
  override name = 'SigningSecretUnreadableError';
}

export function decryptSigningSecret(serviceSecret: string, endpointId: string, stored: string): string {
  const [format, iv, tag, ciphertext, extra] = stored.split('.');
  if (format !== FORMAT || !iv || !tag || ciphertext === undefined || extra !== undefined) {
    throw new SigningSecretUnreadableError(`endpoint ${endpointId}: unknown signing-secret format`);
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyFor(serviceSecret), Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(endpointId, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  } catch (cause) {
    // Wrong SERVICE_SECRET or a tampered row: never fall back to anything.
    throw new SigningSecretUnreadableError(`endpoint ${endpointId}: signing secret cannot be decrypted (SERVICE_SECRET changed?)`, {
      cause,
    });
  }
}

/** hex HMAC-SHA256 over `<timestamp>.<deliveryId>.<eventId>.<rawBody>`. */
export function signDelivery(secret: string, timestamp: number, deliveryId: string, eventId: string, rawBody: Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.${deliveryId}.${eventId}.`, 'utf8').update(rawBody).digest('hex');
}

export function signatureHeader(timestamp: number, signatureHex: string): string {
  return `t=${timestamp},v1=${signatureHex}`;
}
