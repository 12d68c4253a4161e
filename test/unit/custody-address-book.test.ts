import assert from 'node:assert/strict';
import { pbkdf2Sync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import fc from 'fast-check';
import { english, generateMnemonic, HDKey, mnemonicToAccount } from 'viem/accounts';
import {
  CUSTODY_PURPOSES,
  HD_ACCOUNT_BY_PURPOSE,
  createAddressBook,
  createHdSigner,
  formatPublicKeys,
  loadPublicKeys,
  loadSigningSeed,
  parsePublicKeys,
  publicKeysFilePath,
  seedFilePath,
} from '../../src/custody';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

describe('custody address book (extended public keys only)', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'custody-book-'));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('derives exactly the addresses viem derives from the mnemonic, for every purpose and generated indexes', () => {
    const book = createAddressBook(createHdSigner({ mnemonic: MNEMONIC }).publicKeys);
    fc.assert(
      fc.property(fc.constantFrom(...CUSTODY_PURPOSES), fc.integer({ min: 0, max: 2 ** 31 - 1 }), (purpose, index) => {
        const expected = mnemonicToAccount(MNEMONIC, { accountIndex: HD_ACCOUNT_BY_PURPOSE[purpose], addressIndex: index }).address;
        assert.equal(book.deriveAddress({ purpose, index }), expected);
      }),
      { numRuns: 100 },
    );
  });

  test('and for generated mnemonics too', () => {
    fc.assert(
      fc.property(fc.constantFrom(...CUSTODY_PURPOSES), fc.nat({ max: 1000 }), (purpose, index) => {
        const mnemonic = generateMnemonic(english);
        const book = createAddressBook(parsePublicKeys(formatPublicKeys(createHdSigner({ mnemonic }).publicKeys), 'test'));
        assert.equal(
          book.deriveAddress({ purpose, index }),
          mnemonicToAccount(mnemonic, { accountIndex: HD_ACCOUNT_BY_PURPOSE[purpose], addressIndex: index }).address,
        );
      }),
      { numRuns: 15 },
    );
  });

  test('the public keys are xpubs of the branches and never carry a private key', () => {
    const keys = createHdSigner({ mnemonic: MNEMONIC }).publicKeys;
    for (const purpose of CUSTODY_PURPOSES) assert.match(keys[purpose], /^xpub/);
    const text = formatPublicKeys(keys);
    assert.deepEqual(parsePublicKeys(text, 'CUSTODY_PUBLIC_KEYS'), keys);
    assert.doesNotMatch(text, /xprv/);
  });

  test('malformed public keys are refused with the setting named', () => {
    const keys = createHdSigner({ mnemonic: MNEMONIC }).publicKeys;
    assert.throws(
      () => parsePublicKeys(`escrow:${keys.escrow}`, 'CUSTODY_PUBLIC_KEYS'),
      /CUSTODY_PUBLIC_KEYS: no public key for deposit, treasury, fee, vault/,
    );
    assert.throws(
      () => parsePublicKeys(formatPublicKeys({ ...keys, fee: 'xpubnonsense' }), 'CUSTODY_PUBLIC_KEYS'),
      /CUSTODY_PUBLIC_KEYS: the fee public key is not an extended public key/,
    );
    assert.throws(() => parsePublicKeys(`${formatPublicKeys(keys)},bogus:${keys.fee}`, 'CUSTODY_PUBLIC_KEYS'), /purpose one of/);
    // The account-level key (one level up) would derive other addresses: refused by its depth.
    const master = HDKey.fromMasterSeed(pbkdf2Sync(MNEMONIC, 'mnemonic', 2048, 64, 'sha512'));
    assert.throws(
      () => parsePublicKeys(formatPublicKeys({ ...keys, vault: master.derive("m/44'/60'/5'").publicExtendedKey }), 'X'),
      /X: the vault public key must be the branch .* depth 3/,
    );
    assert.throws(
      () => parsePublicKeys(formatPublicKeys({ ...keys, vault: master.derive("m/44'/60'/5'/0").privateExtendedKey }), 'X'),
      /extended private key/,
    );
  });

  describe('seed supply', () => {
    test('production without a seed refuses, naming both settings, and writes nothing', () => {
      const dataDir = tempDir();
      assert.throws(
        () => loadSigningSeed({ deployment: 'production', dataDir, env: {} }),
        (err: Error) => {
          assert.match(err.message, /CUSTODY_MNEMONIC_FILE/);
          assert.match(err.message, /CUSTODY_MNEMONIC\b/);
          assert.match(err.message, /never generates/);
          return true;
        },
      );
      assert.equal(existsSync(seedFilePath(dataDir)), false);
    });

    test('production reads the mounted secret (CUSTODY_MNEMONIC_FILE) or CUSTODY_MNEMONIC, never a data-dir seed', () => {
      const dataDir = tempDir();
      const secret = path.join(tempDir(), 'seed');
      writeFileSync(secret, `${MNEMONIC}\n`, { mode: 0o600 });
      assert.equal(
        loadSigningSeed({ deployment: 'production', dataDir, env: { CUSTODY_MNEMONIC_FILE: secret } }).mnemonic.reveal(),
        MNEMONIC,
      );
      assert.equal(loadSigningSeed({ deployment: 'production', dataDir, env: { CUSTODY_MNEMONIC: MNEMONIC } }).source, 'env');
      assert.throws(
        () => loadSigningSeed({ deployment: 'production', dataDir, env: { CUSTODY_MNEMONIC_FILE: path.join(dataDir, 'absent') } }),
        /CUSTODY_MNEMONIC_FILE: cannot read/,
      );
      assert.throws(
        () => loadSigningSeed({ deployment: 'production', dataDir, env: { CUSTODY_MNEMONIC_FILE: secret, CUSTODY_MNEMONIC: MNEMONIC } }),
        /not both/,
      );
      assert.equal(existsSync(seedFilePath(dataDir)), false);
    });

    test('the sandbox still makes its own seed on first use', () => {
      const dataDir = tempDir();
      const seed = loadSigningSeed({ deployment: 'sandbox', dataDir, env: {} });
      assert.equal(seed.source, 'created');
      assert.equal(readFileSync(seedFilePath(dataDir), 'utf8').trim(), seed.mnemonic.reveal());
    });

    test('the API takes CUSTODY_PUBLIC_KEYS, or in the sandbox the public-keys file, and never the seed', () => {
      const dataDir = tempDir();
      const keys = createHdSigner({ mnemonic: MNEMONIC }).publicKeys;
      assert.deepEqual(
        loadPublicKeys({ deployment: 'production', dataDir, env: { CUSTODY_PUBLIC_KEYS: formatPublicKeys(keys) } }).keys,
        keys,
      );
      // A seed alone is not enough: the API never reads it.
      loadSigningSeed({ deployment: 'sandbox', dataDir, env: {} });
      assert.throws(() => loadPublicKeys({ deployment: 'sandbox', dataDir, env: {} }), /no custody public keys: set CUSTODY_PUBLIC_KEYS/);
      writeFileSync(publicKeysFilePath(dataDir), formatPublicKeys(keys));
      assert.deepEqual(loadPublicKeys({ deployment: 'sandbox', dataDir, env: {} }).keys, keys);
      assert.throws(
        () => loadPublicKeys({ deployment: 'production', dataDir, env: {} }),
        /no custody public keys: set CUSTODY_PUBLIC_KEYS/,
      );
    });
  });
});
