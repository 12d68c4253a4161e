import type { Address, Hash } from 'viem';
import type { Chain } from '../../chain/types';

/** What a re-read of an incoming transfer says: counted, not deep enough yet, or gone from the canonical chain. */
export type TransferOutcome = 'confirmed' | 'pending' | 'dropped';

/**
 * Re-reads one incoming transfer at the confirmation depth: the scanner's sighting is a hint, the
 * chain is the truth. Payments and deposits both decide on this answer.
 */
export async function verifyIncomingTransfer(
  chain: Pick<Chain, 'verifyTransfer'>,
  transfer: { txHash: string; ordinal?: number; logIndex?: number; token: string; to: string; confirmations: number },
): Promise<TransferOutcome> {
  const v = await chain.verifyTransfer({
    txHash: transfer.txHash as Hash,
    ordinal: transfer.ordinal,
    logIndex: transfer.logIndex,
    token: transfer.token as Address,
    to: transfer.to as Address,
    confirmations: transfer.confirmations,
  });
  return v.status === 'confirmed' ? 'confirmed' : v.status === 'pending' ? 'pending' : 'dropped';
}
