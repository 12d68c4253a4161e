export * from './types';
export { Mnemonic } from './mnemonic';
export { createHdCustody, hdPath, HD_ACCOUNT_BY_PURPOSE } from './hd';
export { loadOrCreateSeed, seedFilePath, type LoadedSeed } from './seed';
