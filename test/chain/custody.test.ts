import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { mnemonicToAccount } from 'viem/accounts';
import { fundTestWallet } from '../../src/chain/sandbox';
import { CUSTODY_PURPOSES, createHdCustody, loadOrCreateSeed, seedFilePath } from '../../src/custody';
import { TEST_MNEMONIC, startTestChain, type TestChain, mined } from './helpers';

describe('HD custody', () => {
  let t: TestChain;
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'custody-'));
    dirs.push(dir);
    return dir;
  };
  before(async () => {
    t = await startTestChain();
  });
  after(async () => {
    await t?.node.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('addresses are stable for a path and distinct across purposes and indexes', () => {
    const a = createHdCustody({ mnemonic: TEST_MNEMONIC });
    const b = createHdCustody({ mnemonic: TEST_MNEMONIC });
    const seen = new Set<string>();
    for (const purpose of CUSTODY_PURPOSES) {
      for (const index of [0, 1, 2, 1000]) {
        const address = a.deriveAddress({ purpose, index });
        assert.equal(b.deriveAddress({ purpose, index }), address);
        assert.equal(a.signer({ purpose, index }).address, address);
        seen.add(address);
      }
    }
    assert.equal(seen.size, CUSTODY_PURPOSES.length * 4);
  });

  test('a fresh address (public derivation) is the address of the signer viem derives, for any purpose and index', () => {
    const custody = createHdCustody({ mnemonic: TEST_MNEMONIC });
    const reference = createHdCustody({ mnemonic: TEST_MNEMONIC });
    fc.assert(
      fc.property(fc.constantFrom(...CUSTODY_PURPOSES), fc.integer({ min: 0, max: 2 ** 31 - 1 }), (purpose, index) => {
        // deriveAddress first (no signer cached yet), then the signer from viem's derivation.
        const fresh = custody.deriveAddress({ purpose, index });
        assert.equal(fresh, reference.signer({ purpose, index }).address);
      }),
      { numRuns: 200 },
    );
  });

  test('addresses follow standard BIP-44 paths, so any wallet can recover them from the mnemonic', () => {
    const custody = createHdCustody({ mnemonic: TEST_MNEMONIC });
    assert.equal(
      custody.deriveAddress({ purpose: 'deposit', index: 17 }),
      mnemonicToAccount(TEST_MNEMONIC, { accountIndex: 2, addressIndex: 17 }).address,
    );
    assert.equal(
      custody.deriveAddress({ purpose: 'escrow', index: 0 }),
      mnemonicToAccount(TEST_MNEMONIC, { path: "m/44'/60'/1'/0/0" }).address,
    );
  });

  test('an invalid index or mnemonic is refused', () => {
    const custody = createHdCustody({ mnemonic: TEST_MNEMONIC });
    assert.throws(() => custody.deriveAddress({ purpose: 'fee', index: -1 }), /index/);
    assert.throws(() => custody.deriveAddress({ purpose: 'fee', index: 2 ** 31 }), /index/);
    assert.throws(() => custody.deriveAddress({ purpose: 'fee', index: 1.5 }), /index/);
    assert.throws(() => createHdCustody({ mnemonic: 'abandon '.repeat(12).trim() }), /checksum/);
  });

  test('a custody signer signs a token transfer that lands on chain', async () => {
    const custody = createHdCustody({ mnemonic: TEST_MNEMONIC });
    const escrow = custody.signer({ purpose: 'escrow', index: 3 });
    const treasury = custody.deriveAddress({ purpose: 'treasury', index: 0 });
    await fundTestWallet({ rpcUrl: t.node.rpcUrl, address: escrow.address, tokenAtomic: 50_000_000n });

    const txHash = await mined(
      t.chain,
      await t.chain.sendTokenTransfer({ from: escrow, token: t.token, to: treasury, amountAtomic: 20_000_000n }),
    );
    assert.equal(await t.chain.getTransactionStatus(txHash, 1), 'confirmed');
    assert.equal(await t.chain.getTokenBalance({ token: t.token, owner: escrow.address }), 30_000_000n);
    assert.equal(await t.chain.getTokenBalance({ token: t.token, owner: treasury }), 20_000_000n);
  });

  test('the seed file is created once with owner-only permissions and reused afterwards', () => {
    const dataDir = tempDir();
    const first = loadOrCreateSeed(dataDir, {});
    assert.equal(first.source, 'created');
    const file = seedFilePath(dataDir);
    assert.equal(file, path.join(dataDir, 'custody', 'seed.txt'));
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(readFileSync(file, 'utf8').trim().split(' ').length, 24);

    const second = loadOrCreateSeed(dataDir, {});
    assert.equal(second.source, 'file');
    assert.equal(second.mnemonic.reveal(), first.mnemonic.reveal());
    const address = (m: typeof first.mnemonic) => createHdCustody({ mnemonic: m }).deriveAddress({ purpose: 'deposit', index: 0 });
    assert.equal(address(second.mnemonic), address(first.mnemonic));
  });

  test('CUSTODY_MNEMONIC takes precedence and nothing is written to disk', () => {
    const dataDir = tempDir();
    const seed = loadOrCreateSeed(dataDir, { CUSTODY_MNEMONIC: ` ${TEST_MNEMONIC}\n` });
    assert.equal(seed.source, 'env');
    assert.equal(seed.mnemonic.reveal(), TEST_MNEMONIC);
    assert.throws(() => statSync(seedFilePath(dataDir)), /ENOENT/);
  });

  test('neither the mnemonic nor any key shows up when custody objects are serialized or logged', async () => {
    const seed = loadOrCreateSeed(tempDir(), {});
    const custody = createHdCustody({ mnemonic: seed.mnemonic });
    const signer = custody.signer({ purpose: 'escrow', index: 0 });
    const words = seed.mnemonic.reveal().split(' ');
    const printed = [
      JSON.stringify(seed),
      JSON.stringify(custody),
      JSON.stringify(signer),
      inspect(seed, { depth: 10, showHidden: true }),
      inspect(custody, { depth: 10, showHidden: true }),
      inspect(signer, { depth: 10, showHidden: true }),
      `${seed.mnemonic}`,
    ].join('\n');
    assert.ok(!printed.includes(words.slice(0, 3).join(' ')), 'mnemonic leaked');
    assert.ok(!/[0-9a-f]{64}/i.test(printed), 'something key-shaped leaked');
    assert.equal(signer.sign, undefined); // no raw-hash signing: only transactions, messages, typed data
  });
});
