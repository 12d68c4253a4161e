import type { AddressBook, Custody, Signer } from './types';

/**
 * The address book and a signer as one custody, each signer checked against the address book: an
 * address the API handed out that this signer does not sign for fails here, before a transaction is
 * signed, rather than as a transfer from the wrong address.
 */
export function checkedCustody(addressBook: AddressBook, signer: Signer): Custody {
  return {
    deriveAddress: (path) => addressBook.deriveAddress(path),
    signer(path) {
      const account = signer.signer(path);
      const expected = addressBook.deriveAddress(path);
      if (account.address.toLowerCase() !== expected.toLowerCase()) {
        throw new Error(
          `the signer for ${path.purpose}/${path.index} signs for ${account.address}, but the address book has ${expected}: the public keys and the signer disagree`,
        );
      }
      return account;
    },
  };
}
