import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parsePublicKeys, formatPublicKeys, type CustodyPublicKeys } from './address-book';
import type { Deployment } from '../config';
import { Mnemonic } from './mnemonic';
import { loadOrCreateSeed, readIfExists, type LoadedSeed } from './seed';

/**
 * Where each role gets its keys. The signing role (the worker) reads the seed; the API reads only the
 * extended public keys. Outside the sandbox the seed comes from outside (a mounted secret or the
 * environment) and is never generated.
 */
export interface SupplyOptions {
  deployment: Deployment;
  dataDir: string;
  env: NodeJS.ProcessEnv;
}

export const SEED_SETTINGS = 'CUSTODY_MNEMONIC_FILE (a file holding the mnemonic, such as a mounted secret) or CUSTODY_MNEMONIC';

/** The signing role's seed: CUSTODY_MNEMONIC_FILE or CUSTODY_MNEMONIC; in the sandbox only, else the data dir's own seed (created on first use). */
export function loadSigningSeed({ deployment, dataDir, env }: SupplyOptions): LoadedSeed {
  const file = env.CUSTODY_MNEMONIC_FILE?.trim();
  const inline = env.CUSTODY_MNEMONIC?.trim();
  if (file && inline) throw new Error('custody seed: set CUSTODY_MNEMONIC_FILE or CUSTODY_MNEMONIC, not both');
  if (file) return { mnemonic: readMnemonicFile(file), source: 'secret-file' };
  if (inline) return { mnemonic: new Mnemonic(inline), source: 'env' };
  if (deployment !== 'sandbox') {
    throw new Error(
      `no custody seed: the signing role (the worker) needs ${SEED_SETTINGS}; a production deployment never generates one. ` +
        'Create one offline with `npm run cli -- custody create-seed --out <file>`',
    );
  }
  return loadOrCreateSeed(dataDir, {});
}

function readMnemonicFile(file: string): Mnemonic {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`CUSTODY_MNEMONIC_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  try {
    return new Mnemonic(text);
  } catch (err) {
    throw new Error(`CUSTODY_MNEMONIC_FILE (${file}): ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The sandbox's public keys, written by the signing role next to the seed, read by an API of its own. */
export function publicKeysFilePath(dataDir: string): string {
  return path.join(dataDir, 'custody', 'public-keys.txt');
}

export function writePublicKeysFile(dataDir: string, keys: CustodyPublicKeys): void {
  const file = publicKeysFilePath(dataDir);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${formatPublicKeys(keys)}\n`, { mode: 0o644 });
}

export interface LoadedPublicKeys {
  keys: CustodyPublicKeys;
  /** The setting or file they came from, for errors and the start-up log. */
  source: string;
}

/** Public keys a configuration names (CUSTODY_PUBLIC_KEYS), if it names any. */
export function configuredPublicKeys(env: NodeJS.ProcessEnv): LoadedPublicKeys | undefined {
  const text = env.CUSTODY_PUBLIC_KEYS?.trim();
  return text ? { keys: parsePublicKeys(text, 'CUSTODY_PUBLIC_KEYS'), source: 'CUSTODY_PUBLIC_KEYS' } : undefined;
}

/**
 * The API's public keys: CUSTODY_PUBLIC_KEYS; in the sandbox, when unset, the file the signing role
 * wrote. Never the seed.
 */
export function loadPublicKeys({ deployment, dataDir, env }: SupplyOptions): LoadedPublicKeys {
  const configured = configuredPublicKeys(env);
  if (configured) return configured;
  const file = publicKeysFilePath(dataDir);
  if (deployment === 'sandbox') {
    const text = readIfExists(file);
    if (text !== undefined) return { keys: parsePublicKeys(text, file), source: file };
  }
  throw new Error(
    "no custody public keys: set CUSTODY_PUBLIC_KEYS to the extended public keys of the signing role's seed " +
      '(`npm run cli -- custody public-keys` prints them)' +
      (deployment === 'sandbox' ? `, or start the worker once so it writes ${file}` : ''),
  );
}
