import { createECDH, createHmac, pbkdf2Sync } from 'node:crypto';
import { getAddress, keccak256, toHex, type Address, type LocalAccount } from 'viem';
import { HDKey, privateKeyToAccount, toAccount } from 'viem/accounts';
import { LruCache } from './lru';
import { Mnemonic } from './mnemonic';
import { assertKeyPath, type Custody, type CustodyPurpose, type KeyPath } from './types';

/**
 * BIP-44 account per purpose: m/44'/60'/<account>'/0/<index>. These numbers are part of every derived
 * address; renumbering one would orphan its funds, so they never change. Account 0 is left to wallets.
 */
export const HD_ACCOUNT_BY_PURPOSE: Readonly<Record<CustodyPurpose, number>> = Object.freeze({
  escrow: 1,
  deposit: 2,
  treasury: 3,
  fee: 4,
  // Vaults get a branch of their own: their indexes can never meet an escrow or deposit address.
  vault: 5,
});

export function hdPath({ purpose, index }: KeyPath): string {
  return `m/44'/60'/${HD_ACCOUNT_BY_PURPOSE[purpose]}'/0/${index}`;
}

/**
 * Signers kept ready per custody. Every Payment escrow and deposit address has an index of its own, so
 * an unbounded cache would grow with every Payment for the life of the process; a miss costs one
 * derivation from the cached branch key (well under a millisecond).
 */
export const DEFAULT_MAX_CACHED_SIGNERS = 1024;

export interface HdCustody extends Custody {
  /** How many signers are cached now (at most `maxCachedSigners`). */
  cachedSigners(): number;
}

/**
 * The embedded custody: every key derived from one mnemonic, the same derivation as viem's
 * `mnemonicToAccount(mnemonic, { accountIndex, addressIndex })` (and MetaMask-style wallets), but the
 * BIP-39 seed and each purpose's branch key are computed once: deriving from the mnemonic each time
 * costs ~16 ms of blocked event loop, from the branch well under 1 ms.
 *
 * Key material lives only in this closure; the returned object and its signers carry no keys, so
 * serializing or logging them shows nothing secret.
 */
export function createHdCustody(options: { mnemonic: Mnemonic | string; maxCachedSigners?: number }): HdCustody {
  const mnemonic = typeof options.mnemonic === 'string' ? new Mnemonic(options.mnemonic) : options.mnemonic;
  // BIP-39 seed: PBKDF2-HMAC-SHA512(mnemonic, "mnemonic" + empty passphrase, 2048 rounds).
  const master = HDKey.fromMasterSeed(pbkdf2Sync(mnemonic.reveal(), 'mnemonic', 2048, 64, 'sha512'));
  const branches = new Map<CustodyPurpose, HDKey>();
  const signers = new LruCache<string, LocalAccount>(options.maxCachedSigners ?? DEFAULT_MAX_CACHED_SIGNERS);
  const branchOf = (purpose: CustodyPurpose): HDKey => {
    let branch = branches.get(purpose);
    if (!branch) {
      branch = master.derive(`m/44'/60'/${HD_ACCOUNT_BY_PURPOSE[purpose]}'/0`);
      branches.set(purpose, branch);
    }
    return branch;
  };

  function signer(path: KeyPath): LocalAccount {
    assertKeyPath(path);
    const id = hdPath(path);
    let account = signers.get(id);
    if (!account) {
      const key = branchOf(path.purpose).deriveChild(path.index).privateKey;
      if (!key) throw new Error('HD derivation produced no private key');
      const inner = privateKeyToAccount(toHex(key));
      // Re-wrapped so callers get signing functions only: no raw-hash `sign`, nothing key-shaped.
      account = toAccount({
        address: inner.address,
        signMessage: inner.signMessage,
        signTransaction: inner.signTransaction,
        signTypedData: inner.signTypedData,
      });
      signers.set(id, account);
    }
    return account;
  }

  return {
    // Every create hands out a new address: derived with native crypto (~0.1 ms), not a signer (~3 ms).
    deriveAddress: (path: KeyPath): Address => {
      assertKeyPath(path);
      return signers.get(hdPath(path))?.address ?? childAddress(branchOf(path.purpose), path.index);
    },
    signer,
    cachedSigners: () => signers.size,
  };
}

const SECP256K1_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * The address of a branch's non-hardened child (BIP-32 CKDpriv, then the Ethereum address of its
 * public key) with Node's native HMAC and secp256k1, where @scure/bip32 and viem spend two big-integer
 * point multiplications. The same keys: test/chain/custody.test.ts checks it against viem over
 * generated indexes.
 */
export function childAddress(branch: HDKey, index: number): Address {
  if (!branch.privateKey || !branch.publicKey || !branch.chainCode) throw new Error('a branch key with its private key is needed');
  const data = Buffer.alloc(37);
  Buffer.from(branch.publicKey).copy(data, 0);
  data.writeUInt32BE(index, 33);
  const i = createHmac('sha512', branch.chainCode).update(data).digest();
  const il = BigInt(`0x${i.subarray(0, 32).toString('hex')}`);
  const child = (il + BigInt(toHex(branch.privateKey))) % SECP256K1_ORDER;
  // BIP-32: such an index is skipped; @scure/bip32 throws, and so does this (odds about 2^-127).
  if (il >= SECP256K1_ORDER || child === 0n) throw new Error(`HD index ${index} derives no valid key`);
  const ecdh = createECDH('secp256k1');
  ecdh.setPrivateKey(Buffer.from(child.toString(16).padStart(64, '0'), 'hex'));
  const publicKey = ecdh.getPublicKey(); // uncompressed: 0x04 || x || y
  return getAddress(`0x${keccak256(publicKey.subarray(1)).slice(-40)}`);
}
