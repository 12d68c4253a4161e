import { sha256Hex } from '../../platform/secrets';

/**
 * The service secret as a keyring (docs/decisions/accounts-and-auth.md "Rotating and revoking credentials"): the
 * current key signs, seals and derives everything new; previous keys (SERVICE_SECRET_PREVIOUS) are
 * still accepted for reading sealed columns and verifying tokens, client secrets, cursors and codes,
 * until `npm run cli -- keys reseal` has moved every sealed column to the current key and the
 * operator drops them. A plain string is a keyring of one key.
 */
export interface ServiceKeys {
  readonly current: string;
  readonly previous: readonly string[];
}
export type ServiceSecret = string | ServiceKeys;

export const currentKey = (secret: ServiceSecret): string => (typeof secret === 'string' ? secret : secret.current);

/** Every accepted key, the current one first. */
export const acceptedKeys = (secret: ServiceSecret): readonly string[] =>
  typeof secret === 'string' ? [secret] : [secret.current, ...secret.previous];

/** A short public name of a key (stored beside what it sealed or signed), never the key itself. */
export const keyIdOf = (key: string): string => sha256Hex(`service-key-id:${key}`).slice(0, 12);

/** The key named `id`, among the accepted ones. */
export const keyById = (secret: ServiceSecret, id: string): string | undefined => acceptedKeys(secret).find((k) => keyIdOf(k) === id);

/** Whether any accepted key makes `check` true (verifying what an older key signed). */
export const anyKey = (secret: ServiceSecret, check: (key: string) => boolean): boolean => acceptedKeys(secret).some(check);
