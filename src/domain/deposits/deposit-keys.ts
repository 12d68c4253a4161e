import { createHash } from 'node:crypto';

/**
 * A deposit's id is derived from its transfer's identity (chainId, txHash, recipient, ordinal; see
 * src/chain/transfer-key.ts): every run of its workflow, every rescan (even of a transfer a reorg
 * mined again at another log index) and every retried activity names the same deposit, and the row's
 * primary key (plus its unique transfer identity) makes recording it idempotent.
 */
export function depositIdFor(t: { chainId: number; txHash: string; to: string; ordinal: number }): string {
  const digest = createHash('sha256')
    .update(`deposit:${t.chainId}:${t.txHash.toLowerCase()}:${t.to.toLowerCase()}:${t.ordinal}`)
    .digest('hex');
  return `deposit_${digest.slice(0, 32)}`;
}
