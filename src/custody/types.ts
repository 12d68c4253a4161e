import type { Address, LocalAccount } from 'viem';

/**
 * Keys for the addresses the service controls. The embedded default derives them from one HD seed
 * (./hd.ts); production puts a KMS or MPC signer behind the same interface, so no caller ever holds
 * key material, only addresses and signing functions.
 */
export const CUSTODY_PURPOSES = ['escrow', 'deposit', 'treasury', 'fee', 'vault'] as const;
export type CustodyPurpose = (typeof CUSTODY_PURPOSES)[number];

export interface KeyPath {
  purpose: CustodyPurpose;
  /** 0 ≤ index < 2^31, e.g. one per deposit address. */
  index: number;
}

/**
 * The public half: every address the service hands out, derived from extended public keys alone (no
 * private key). The API holds only this; see ./address-book.ts.
 */
export interface AddressBook {
  /** Pure and stable: the same path always answers the same address. */
  deriveAddress(path: KeyPath): Address;
}

/**
 * The signing half, held only by the role that sends transactions (the worker). The local HD signer
 * (./hd.ts) implements it; a KMS, HSM or MPC adapter can replace it (docs/custody-signers.md).
 */
export interface Signer {
  /** A viem account that signs for the path's address (usable as `account` of a WalletClient). */
  signer(path: KeyPath): LocalAccount;
}

/** What the signing role works with: the address book and a signer that agrees with it. */
export interface Custody extends AddressBook, Signer {}

export function assertKeyPath(path: KeyPath): void {
  if (!CUSTODY_PURPOSES.includes(path.purpose)) throw new Error(`unknown custody purpose ${String(path.purpose)}`);
  if (!Number.isInteger(path.index) || path.index < 0 || path.index >= 2 ** 31) {
    throw new Error(`custody index must be an integer in [0, 2^31), got ${path.index}`);
  }
}
