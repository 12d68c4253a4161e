import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { english, generateMnemonic } from 'viem/accounts';
import {
  createAddressBook,
  createHdSigner,
  formatPublicKeys,
  loadSigningSeed,
  Mnemonic,
  seedFilePath,
  type CustodyPublicKeys,
} from '../custody';
import { dataDir } from '../embedded/paths';
import { UsageError, type Register } from './shared';

export const CUSTODY_USAGE = `  npm run cli -- custody create-seed --out <file> [--print-mnemonic]
  npm run cli -- custody public-keys [--seed-file <file>]`;

/**
 *   custody create-seed --out <file> [--print-mnemonic]
 *       offline: writes a new 24-word seed to <file> (0600, never overwriting one) for the signing role's
 *       CUSTODY_MNEMONIC_FILE, and prints the extended public keys the API needs (CUSTODY_PUBLIC_KEYS);
 *       the mnemonic itself only with --print-mnemonic.
 *   custody public-keys [--seed-file <file>]
 *       prints the public keys of an existing seed: --seed-file, else CUSTODY_MNEMONIC_FILE or
 *       CUSTODY_MNEMONIC, else (sandbox) the data dir's seed. Never creates one.
 */
export function registerCustodyCommands(register: Register): void {
  register('custody create-seed', async (argv) => {
    const { values } = parseArgs({ args: argv, options: { out: { type: 'string' }, 'print-mnemonic': { type: 'boolean' } }, strict: true });
    if (!values.out) throw new UsageError('custody create-seed needs --out <file>');
    const out = path.resolve(values.out);
    const phrase = generateMnemonic(english, 256);
    try {
      // 'wx': an existing file may be the only copy of a seed in use; never overwrite it.
      writeFileSync(out, `${phrase}\n`, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST')
        throw new Error(`${out} exists: a seed is never overwritten; choose another --out`);
      throw err;
    }
    return {
      seedFile: out,
      ...publicKeysResult(createHdSigner({ mnemonic: phrase }).publicKeys),
      ...(values['print-mnemonic'] ? { mnemonic: phrase } : {}),
    };
  });

  register('custody public-keys', async (argv, ctx) => {
    const { values } = parseArgs({ args: argv, options: { 'seed-file': { type: 'string' } }, strict: true });
    const env = values['seed-file'] ? { CUSTODY_MNEMONIC_FILE: values['seed-file'] } : ctx.env;
    const data = dataDir(ctx.env);
    const explicit = env.CUSTODY_MNEMONIC_FILE?.trim() || env.CUSTODY_MNEMONIC?.trim();
    // Outside the settings only an existing sandbox seed: a command that made one up would print keys nothing signs for.
    const mnemonic: Mnemonic = explicit
      ? loadSigningSeed({ deployment: 'production', dataDir: data, env }).mnemonic
      : existingSandboxSeed(data);
    return publicKeysResult(createHdSigner({ mnemonic }).publicKeys);
  });
}

function existingSandboxSeed(data: string): Mnemonic {
  const file = seedFilePath(data);
  if (!existsSync(file))
    throw new UsageError(
      `custody public-keys needs a seed: --seed-file <file>, CUSTODY_MNEMONIC_FILE or CUSTODY_MNEMONIC (no sandbox seed at ${file})`,
    );
  return new Mnemonic(readFileSync(file, 'utf8'));
}

/** The keys, the setting that carries them, and the service addresses an operator funds or watches (the same on every EVM chain). */
function publicKeysResult(keys: CustodyPublicKeys) {
  const book = createAddressBook(keys);
  return {
    publicKeys: keys,
    env: { CUSTODY_PUBLIC_KEYS: formatPublicKeys(keys) },
    serviceAddresses: {
      gasTreasury: book.deriveAddress({ purpose: 'treasury', index: 0 }),
      platformFee: book.deriveAddress({ purpose: 'fee', index: 0 }),
      partnerFee: book.deriveAddress({ purpose: 'fee', index: 1 }),
    },
  };
}
