import type { CustodyPurpose, KeyPath } from './types';

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

/** The purpose's branch, m/44'/60'/<account>'/0: its extended public key derives every address of the purpose. */
export function branchPath(purpose: CustodyPurpose): string {
  return `m/44'/60'/${HD_ACCOUNT_BY_PURPOSE[purpose]}'/0`;
}

export function hdPath({ purpose, index }: KeyPath): string {
  return `${branchPath(purpose)}/${index}`;
}
