import { pbkdf2Sync } from 'node:crypto';
import { toHex, type LocalAccount } from 'viem';
import { HDKey, privateKeyToAccount, toAccount } from 'viem/accounts';
import { createAddressBook, type CustodyPublicKeys } from './address-book';
import { checkedCustody } from './checked-custody';
import { LruCache } from './lru';
import { Mnemonic } from './mnemonic';
import { branchPath, hdPath } from './paths';
import { assertKeyPath, CUSTODY_PURPOSES, type Custody, type CustodyPurpose, type KeyPath, type Signer } from './types';

export { HD_ACCOUNT_BY_PURPOSE, hdPath, branchPath } from './paths';

/**
 * Signers kept ready per custody. Every Payment escrow and deposit address has an index of its own, so
 * an unbounded cache would grow with every Payment for the life of the process; a miss costs one
 * derivation from the cached branch key (well under a millisecond).
 */
export const DEFAULT_MAX_CACHED_SIGNERS = 1024;

export interface HdSigner extends Signer {
  /** The extended public keys of this seed's branches: what the API's address book is made of. */
  readonly publicKeys: CustodyPublicKeys;
  /** How many signers are cached now (at most `maxCachedSigners`). */
  cachedSigners(): number;
}

export interface HdCustody extends Custody {
  readonly publicKeys: CustodyPublicKeys;
  cachedSigners(): number;
}

/**
 * The local signer: every key derived from one mnemonic, the same derivation as viem's
 * `mnemonicToAccount(mnemonic, { accountIndex, addressIndex })` (and MetaMask-style wallets), but the
 * BIP-39 seed and each purpose's branch key are computed once: deriving from the mnemonic each time
 * costs ~16 ms of blocked event loop, from the branch well under 1 ms.
 *
 * Key material lives only in this closure; the returned object and its signers carry no keys, so
 * serializing or logging them shows nothing secret.
 */
export function createHdSigner(options: { mnemonic: Mnemonic | string; maxCachedSigners?: number }): HdSigner {
  const mnemonic = typeof options.mnemonic === 'string' ? new Mnemonic(options.mnemonic) : options.mnemonic;
  // BIP-39 seed: PBKDF2-HMAC-SHA512(mnemonic, "mnemonic" + empty passphrase, 2048 rounds).
  const master = HDKey.fromMasterSeed(pbkdf2Sync(mnemonic.reveal(), 'mnemonic', 2048, 64, 'sha512'));
  const branches = new Map<CustodyPurpose, HDKey>(CUSTODY_PURPOSES.map((purpose) => [purpose, master.derive(branchPath(purpose))]));
  const publicKeys = Object.freeze(
    Object.fromEntries(CUSTODY_PURPOSES.map((p) => [p, branches.get(p)!.publicExtendedKey])) as Record<CustodyPurpose, string>,
  );
  const signers = new LruCache<string, LocalAccount>(options.maxCachedSigners ?? DEFAULT_MAX_CACHED_SIGNERS);

  function signer(path: KeyPath): LocalAccount {
    assertKeyPath(path);
    return signers.getOrCreate(hdPath(path), () => {
      const key = branches.get(path.purpose)!.deriveChild(path.index).privateKey;
      if (!key) throw new Error('HD derivation produced no private key');
      const inner = privateKeyToAccount(toHex(key));
      // Re-wrapped so callers get signing functions only: no raw-hash `sign`, nothing key-shaped.
      return toAccount({
        address: inner.address,
        signMessage: inner.signMessage,
        signTransaction: inner.signTransaction,
        signTypedData: inner.signTypedData,
      });
    });
  }

  return { signer, publicKeys, cachedSigners: () => signers.size };
}

/** The local signer with the address book of its own public keys: the sandbox's and the tests' custody. */
export function createHdCustody(options: { mnemonic: Mnemonic | string; maxCachedSigners?: number }): HdCustody {
  const hd = createHdSigner(options);
  return { ...checkedCustody(createAddressBook(hd.publicKeys), hd), publicKeys: hd.publicKeys, cachedSigners: hd.cachedSigners };
}
