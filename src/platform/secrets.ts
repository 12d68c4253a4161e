import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * App secrets are 256-bit random tokens, so a fast SHA-256 is enough to make a stolen table useless
 * (there is nothing to brute-force), and it keeps authentication off the request's critical path.
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time comparison of two strings; different lengths compare unequal without leaking where. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

export function hmacHex(key: string, data: string): string {
  return createHmac('sha256', key).update(data, 'utf8').digest('hex');
}

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A 256-bit key for one purpose, derived from the service secret under a label no other use shares. */
export function deriveKey(serviceSecret: string, label: string): Uint8Array {
  return new Uint8Array(createHmac('sha256', serviceSecret).update(`derive:${label}`, 'utf8').digest());
}
