import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { acceptedKeys, currentKey, keyById, keyIdOf, type ServiceSecret } from './service-keys';

/**
 * Text stored only encrypted (webhook signing secrets, bank account numbers, console and checkout
 * cookies): AES-256-GCM under a key derived from the service secret with HKDF-SHA256 and a label per
 * use, a random 96-bit IV per encryption, and the owning row's id as associated data, so a ciphertext
 * copied onto another row does not decrypt. Stored form: `v2.<key id>.<iv>.<tag>.<ciphertext>`
 * (base64url parts), sealed under the keyring's current key and opened under the key it names; the
 * older `v1.<iv>.<tag>.<ciphertext>` (no key id) is opened under each accepted key in turn.
 */
const FORMAT = 'v2';

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

export function sealText(serviceSecret: ServiceSecret, label: string, ownerId: string, plaintext: string): string {
  const secret = currentKey(serviceSecret);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(secret, label), iv);
  cipher.setAAD(Buffer.from(ownerId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [
    FORMAT,
    keyIdOf(secret),
    iv.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
    ciphertext.toString('base64url'),
  ].join('.');
}

/** Whether a stored value is sealed under the keyring's current key (what `keys reseal` leaves alone). */
export function sealedUnderCurrentKey(serviceSecret: ServiceSecret, stored: string): boolean {
  return stored.startsWith(`${FORMAT}.${keyIdOf(currentKey(serviceSecret))}.`);
}

function open(secret: string, label: string, ownerId: string, iv: string, tag: string, ciphertext: string): string | Error {
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyFor(secret, label), Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(ownerId, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  } catch (cause) {
    // Wrong key, another row's ciphertext, or a tampered row: never fall back to anything.
    return new Error('cannot be decrypted (SERVICE_SECRET changed, or its previous key dropped too soon?)', { cause });
  }
}

/** The plaintext, or an Error saying why not (unknown format or key, wrong owner, tampered). */
export function openSealedText(serviceSecret: ServiceSecret, label: string, ownerId: string, stored: string): string | Error {
  const parts = stored.split('.');
  if (parts[0] === FORMAT && parts.length === 5) {
    const [, keyId, iv, tag, ciphertext] = parts as [string, string, string, string, string];
    const secret = keyById(serviceSecret, keyId);
    return secret === undefined
      ? new Error('sealed under a key the keyring no longer holds')
      : open(secret, label, ownerId, iv, tag, ciphertext);
  }
  if (parts[0] === 'v1' && parts.length === 4) {
    const [, iv, tag, ciphertext] = parts as [string, string, string, string];
    let last: Error = new Error('no key');
    for (const secret of acceptedKeys(serviceSecret)) {
      const opened = open(secret, label, ownerId, iv, tag, ciphertext);
      if (typeof opened === 'string') return opened;
      last = opened;
    }
    return last;
  }
  return new Error('unknown sealed-text format');
}
