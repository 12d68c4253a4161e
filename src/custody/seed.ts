import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { english, generateMnemonic } from 'viem/accounts';
import { Mnemonic } from './mnemonic';

export interface LoadedSeed {
  mnemonic: Mnemonic;
  /** Where it came from; safe to log, unlike the mnemonic. */
  source: 'env' | 'secret-file' | 'file' | 'created';
}

export function seedFilePath(dataDir: string): string {
  return path.join(dataDir, 'custody', 'seed.txt');
}

/**
 * The embedded custody's seed: `CUSTODY_MNEMONIC` when set (nothing is written), else
 * `<dataDir>/custody/seed.txt`, created with a fresh 24-word mnemonic on first use. The file is
 * owner-only (0600, directory 0700); losing it loses every derived address's funds, so back it up.
 */
export function loadOrCreateSeed(dataDir: string, env: NodeJS.ProcessEnv = process.env): LoadedSeed {
  const fromEnv = env.CUSTODY_MNEMONIC?.trim();
  if (fromEnv) return { mnemonic: new Mnemonic(fromEnv), source: 'env' };

  const file = seedFilePath(dataDir);
  const existing = readIfExists(file);
  if (existing !== undefined) return { mnemonic: new Mnemonic(existing), source: 'file' };

  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const phrase = generateMnemonic(english, 256);
  try {
    // 'wx': if another process created the file meanwhile, keep its seed rather than overwrite it.
    writeFileSync(file, `${phrase}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return { mnemonic: new Mnemonic(readFileSync(file, 'utf8')), source: 'file' };
  }
  chmodSync(file, 0o600); // the mode above is filtered by the umask; make it exact
  return { mnemonic: new Mnemonic(phrase), source: 'created' };
}

/** The file's text, or undefined when there is no such file (any other error is thrown). */
export function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
