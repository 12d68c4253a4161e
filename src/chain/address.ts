import { getAddress, type Address } from 'viem';

/**
 * EIP-55 for addresses that come from outside (partners, operators). A mixed-case address carries a
 * checksum, and a wrong one means a typo: refused, never "corrected" into somebody else's address. A
 * single-case address (all lower or all upper hex) carries none and is accepted as it is. Either way
 * the service keeps and answers the checksummed spelling.
 */
const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export type AddressCheck = { ok: true; address: Address } | { ok: false; reason: string };

export function checkEvmAddress(input: string): AddressCheck {
  if (!HEX_ADDRESS.test(input)) return { ok: false, reason: 'must be a 0x-prefixed 20-byte EVM address' };
  const hex = input.slice(2);
  const checksummed = getAddress(input);
  const singleCase = hex === hex.toLowerCase() || hex === hex.toUpperCase();
  if (!singleCase && checksummed !== input) {
    return {
      ok: false,
      reason: 'has a wrong EIP-55 checksum (mixed case that does not match); check for a typo, or send it all lowercase',
    };
  }
  return { ok: true, address: checksummed };
}
