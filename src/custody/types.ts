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

export interface Custody {
  /** Pure and stable: the same path always answers the same address. */
  deriveAddress(path: KeyPath): Address;
  /** A viem account that signs for the path's address (usable as `account` of a WalletClient). */
  signer(path: KeyPath): LocalAccount;
}

export function assertKeyPath(path: KeyPath): void {
  if (!CUSTODY_PURPOSES.includes(path.purpose)) throw new Error(`unknown custody purpose ${String(path.purpose)}`);
  if (!Number.isInteger(path.index) || path.index < 0 || path.index >= 2 ** 31) {
    throw new Error(`custody index must be an integer in [0, 2^31), got ${path.index}`);
  }
}
