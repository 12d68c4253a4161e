export * from './types';
export { Mnemonic } from './mnemonic';
export { createHdCustody, createHdSigner, DEFAULT_MAX_CACHED_SIGNERS, type HdCustody, type HdSigner } from './hd';
export { hdPath, branchPath, HD_ACCOUNT_BY_PURPOSE } from './paths';
export { createAddressBook, formatPublicKeys, parsePublicKeys, publicKeyDifferences, type CustodyPublicKeys } from './address-book';
export { checkedCustody } from './checked-custody';
export { loadOrCreateSeed, seedFilePath, type LoadedSeed } from './seed';
export * from './supply';
