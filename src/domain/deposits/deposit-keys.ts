import { createHash } from 'node:crypto';

/**
 * A deposit's id is derived from its transfer (chainId, txHash, logIndex): every run of its workflow,
 * every rescan and every retried activity names the same deposit, and the row's primary key (plus the
 * unique transfer key) makes recording it idempotent.
 */
export function depositIdFor(chainId: number, txHash: string, logIndex: number): string {
  const digest = createHash('sha256').update(`deposit:${chainId}:${txHash.toLowerCase()}:${logIndex}`).digest('hex');
  return `deposit_${digest.slice(0, 32)}`;
}
