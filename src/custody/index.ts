export * from './types';
export { Mnemonic } from './mnemonic';
export { createHdCustody, hdPath, HD_ACCOUNT_BY_PURPOSE, DEFAULT_MAX_CACHED_SIGNERS, type HdCustody } from './hd';
export { loadOrCreateSeed, seedFilePath, type LoadedSeed } from './seed';
