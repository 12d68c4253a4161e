import { createHmac } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1';
import { getAddress, keccak256, toHex, type Address } from 'viem';
import { HDKey } from 'viem/accounts';
import { assertKeyPath, CUSTODY_PURPOSES, type AddressBook, type CustodyPurpose } from './types';

/** Per purpose, the extended public key (xpub…) of its branch m/44'/60'/<account>'/0. Public: safe to log and share. */
export type CustodyPublicKeys = Readonly<Record<CustodyPurpose, string>>;

/** m/44'/60'/<account>'/0 is four levels below the master key. */
const BRANCH_DEPTH = 4;
const SECP256K1_ORDER = secp256k1.CURVE.n;
type Point = InstanceType<typeof secp256k1.ProjectivePoint>;

interface Branch {
  publicKey: Buffer;
  chainCode: Buffer;
  point: Point;
}

/**
 * The address book of the public keys: BIP-32 public derivation (CKDpub) of each branch's
 * non-hardened child, so a process holding it can hand out every address and sign for none. Branch
 * keys are parsed once; a derivation is one HMAC, one multiplication of the base point and one addition.
 */
export function createAddressBook(keys: CustodyPublicKeys): AddressBook {
  const branches = new Map(CUSTODY_PURPOSES.map((purpose) => [purpose, parseBranch(purpose, keys[purpose])]));
  return {
    deriveAddress(path) {
      assertKeyPath(path);
      return childAddress(branches.get(path.purpose)!, path.index);
    },
  };
}

function parseBranch(purpose: CustodyPurpose, xpub: string): Branch {
  let key: HDKey;
  try {
    key = HDKey.fromExtendedKey(xpub);
  } catch (err) {
    throw new Error(`the ${purpose} public key is not an extended public key (${err instanceof Error ? err.message : String(err)})`);
  }
  if (key.privateKey) throw new Error(`the ${purpose} key is an extended private key: give its public key (xpub…), never the private one`);
  if (key.depth !== BRANCH_DEPTH || key.index !== 0 || !key.publicKey || !key.chainCode) {
    throw new Error(
      `the ${purpose} public key must be the branch m/44'/60'/<account>'/0 (depth ${BRANCH_DEPTH}, child 0), this one has depth ${key.depth}, child ${key.index}`,
    );
  }
  const publicKey = Buffer.from(key.publicKey);
  return { publicKey, chainCode: Buffer.from(key.chainCode), point: secp256k1.ProjectivePoint.fromHex(publicKey) };
}

/**
 * CKDpub of a non-hardened child, then its Ethereum address: the tweak's point added to the cached
 * branch point. The same keys as the private
 * derivation: test/unit/custody-address-book.test.ts checks it against viem over generated indexes.
 */
function childAddress(branch: Branch, index: number): Address {
  const data = Buffer.alloc(37);
  branch.publicKey.copy(data, 0);
  data.writeUInt32BE(index, 33);
  const i = createHmac('sha512', branch.chainCode).update(data).digest();
  const tweak = i.subarray(0, 32);
  const il = BigInt(toHex(tweak));
  // BIP-32: such an index is skipped; @scure/bip32 throws, and so does this (odds about 2^-127).
  if (il === 0n || il >= SECP256K1_ORDER) throw new Error(`HD index ${index} derives no valid key`);
  // The base point's multiples are precomputed (@noble/curves): faster here than Node's native ECDH.
  // Variable time is fine: the tweak comes from public data (the extended public key).
  const child = secp256k1.ProjectivePoint.BASE.multiplyUnsafe(il).add(branch.point);
  if (child.equals(secp256k1.ProjectivePoint.ZERO)) throw new Error(`HD index ${index} derives no valid key`);
  const uncompressed = child.toRawBytes(false); // 0x04 || x || y
  return getAddress(`0x${keccak256(uncompressed.subarray(1)).slice(-40)}`);
}

/** `escrow:xpub…,deposit:xpub…,…`: the one-line form of CUSTODY_PUBLIC_KEYS and the public-keys file. */
export function formatPublicKeys(keys: CustodyPublicKeys): string {
  return CUSTODY_PURPOSES.map((purpose) => `${purpose}:${keys[purpose]}`).join(',');
}

/** Parses formatPublicKeys' form (commas or whitespace between entries); `source` names the setting in errors. */
export function parsePublicKeys(text: string, source: string): CustodyPublicKeys {
  const keys: Partial<Record<CustodyPurpose, string>> = {};
  for (const entry of text.split(/[\s,]+/).filter(Boolean)) {
    const [purpose, xpub, ...rest] = entry.split(':');
    if (!CUSTODY_PURPOSES.includes(purpose as CustodyPurpose) || !xpub || rest.length > 0) {
      throw new Error(
        `${source}: each entry is <purpose>:<xpub…> with purpose one of ${CUSTODY_PURPOSES.join(', ')}; got "${entry.slice(0, 24)}…"`,
      );
    }
    if (keys[purpose as CustodyPurpose]) throw new Error(`${source}: ${purpose} is given twice`);
    keys[purpose as CustodyPurpose] = xpub;
  }
  const missing = CUSTODY_PURPOSES.filter((p) => !keys[p]);
  if (missing.length > 0)
    throw new Error(`${source}: no public key for ${missing.join(', ')} (the CLI's \`custody public-keys\` prints all of them)`);
  const parsed = keys as CustodyPublicKeys;
  try {
    createAddressBook(parsed);
  } catch (err) {
    throw new Error(`${source}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parsed;
}

/** The purposes whose public keys differ between two sets. */
export function publicKeyDifferences(a: CustodyPublicKeys, b: CustodyPublicKeys): CustodyPurpose[] {
  return CUSTODY_PURPOSES.filter((purpose) => a[purpose] !== b[purpose]);
}
