import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { mnemonicToAccount } from 'viem/accounts';
import { createAddressBook, HD_ACCOUNT_BY_PURPOSE, parsePublicKeys } from '../../src/custody';
import { cli, CliExit, runCli } from '../support/cli';

describe('custody CLI', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'custody-cli-'));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('create-seed writes an owner-only seed, prints the public keys the API needs and never the mnemonic', async () => {
    const out = path.join(tempDir(), 'seed.txt');
    const { stdout, stderr } = await runCli(['custody', 'create-seed', '--out', out]);
    const phrase = readFileSync(out, 'utf8').trim();
    assert.equal(phrase.split(' ').length, 24);
    assert.equal(statSync(out).mode & 0o777, 0o600);
    assert.ok(!stdout.includes(phrase) && !stderr.includes(phrase), 'the mnemonic is not printed');
    for (const word of new Set(phrase.split(' '))) assert.ok(!`${stdout}${stderr}`.includes(` ${word} `));
    const result = JSON.parse(stdout);
    assert.equal(result.seedFile, out);
    // The printed setting is exactly what the API parses, and its addresses are the seed's.
    const book = createAddressBook(parsePublicKeys(result.env.CUSTODY_PUBLIC_KEYS, 'CUSTODY_PUBLIC_KEYS'));
    for (const purpose of ['escrow', 'vault'] as const) {
      assert.equal(
        book.deriveAddress({ purpose, index: 7 }),
        mnemonicToAccount(phrase, { accountIndex: HD_ACCOUNT_BY_PURPOSE[purpose], addressIndex: 7 }).address,
      );
    }
    assert.equal(result.publicKeys.escrow, parsePublicKeys(result.env.CUSTODY_PUBLIC_KEYS, 'x').escrow);
    // The addresses an operator funds with gas (on every chain) and watches for fees.
    assert.deepEqual(result.serviceAddresses, {
      gasTreasury: mnemonicToAccount(phrase, { accountIndex: HD_ACCOUNT_BY_PURPOSE.treasury, addressIndex: 0 }).address,
      platformFee: mnemonicToAccount(phrase, { accountIndex: HD_ACCOUNT_BY_PURPOSE.fee, addressIndex: 0 }).address,
      partnerFee: mnemonicToAccount(phrase, { accountIndex: HD_ACCOUNT_BY_PURPOSE.fee, addressIndex: 1 }).address,
    });
  });

  test('create-seed never overwrites a seed, and prints the mnemonic only when asked', async () => {
    const out = path.join(tempDir(), 'seed.txt');
    const shown = await cli(['custody', 'create-seed', '--out', out, '--print-mnemonic']);
    assert.equal(shown.mnemonic, readFileSync(out, 'utf8').trim());
    await assert.rejects(
      runCli(['custody', 'create-seed', '--out', out]),
      (err: CliExit) => err.code === 1 && /exists: a seed is never overwritten/.test(err.stderr),
    );
    assert.equal(readFileSync(out, 'utf8').trim(), shown.mnemonic);
    await assert.rejects(runCli(['custody', 'create-seed']), (err: CliExit) => err.code === 2 && /--out/.test(err.stderr));
  });

  test('public-keys prints the keys of an existing seed, the same create-seed printed', async () => {
    const out = path.join(tempDir(), 'seed.txt');
    const created = await cli(['custody', 'create-seed', '--out', out]);
    const emptyData = tempDir();
    assert.deepEqual(await cli(['custody', 'public-keys', '--seed-file', out], { DATA_DIR: emptyData }), {
      publicKeys: created.publicKeys,
      env: created.env,
      serviceAddresses: created.serviceAddresses,
    });
    assert.deepEqual((await cli(['custody', 'public-keys'], { DATA_DIR: emptyData, CUSTODY_MNEMONIC_FILE: out })).env, created.env);
    // No seed anywhere: an error, and none is made up.
    await assert.rejects(
      runCli(['custody', 'public-keys'], { DATA_DIR: emptyData }),
      (err: CliExit) => err.code === 2 && /needs a seed/.test(err.stderr),
    );
  });
});
