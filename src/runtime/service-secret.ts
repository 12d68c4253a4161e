import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ServiceKeys } from '../domain/keys/service-keys';

/** SERVICE_SECRET when set; else a random one kept under .data/ so cursors survive restarts. */
export function resolveServiceSecret(configured: string | undefined, dataDir: string): string {
  if (configured) return configured;
  const file = path.join(dataDir, 'service-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('hex');
  writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
  return secret;
}

/** The keyring: the current key (as resolveServiceSecret) and the previous ones still accepted. */
export function resolveServiceKeys(config: { serviceSecret?: string; previousServiceSecrets?: string[] }, dataDir: string): ServiceKeys {
  return { current: resolveServiceSecret(config.serviceSecret, dataDir), previous: config.previousServiceSecrets ?? [] };
}
