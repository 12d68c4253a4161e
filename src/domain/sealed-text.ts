import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Text stored only encrypted (webhook signing secrets, bank account numbers): AES-256-GCM under a key
 * derived from SERVICE_SECRET with HKDF-SHA256 and a label per use, a random 96-bit IV per
 * encryption, and the owning row's id as associated data, so a ciphertext copied onto another row
 * does not decrypt. Stored form: `v1.<iv>.<tag>.<ciphertext>` (base64url parts).
 */
const FORMAT = 'v1';

const keys = new Map<string, Buffer>();

function keyFor(serviceSecret: string, label: string): Buffer {
  const cacheKey = `${label}\u0000${serviceSecret}`;
  let key = keys.get(cacheKey);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', Buffer.from(serviceSecret, 'utf8'), Buffer.alloc(0), label, 32));
    keys.set(cacheKey, key);
  }
  return key;
}

export function sealText(serviceSecret: string, label: string, ownerId: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(serviceSecret, label), iv);
  cipher.setAAD(Buffer.from(ownerId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [FORMAT, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
}

/** The plaintext, or an Error saying why not (unknown format, wrong key or owner, tampered). */
export function openSealedText(serviceSecret: string, label: string, ownerId: string, stored: string): string | Error {
  const [format, iv, tag, ciphertext, extra] = stored.split('.');
  if (format !== FORMAT || !iv || !tag || ciphertext === undefined || extra !== undefined) return new Error('unknown sealed-text format');
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyFor(serviceSecret, label), Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(ownerId, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  } catch (cause) {
    // Wrong SERVICE_SECRET, another row's ciphertext, or a tampered row: never fall back to anything.
    return new Error('cannot be decrypted (SERVICE_SECRET changed?)', { cause });
  }
}
