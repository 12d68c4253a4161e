import type { Hash } from 'viem';
import type { Chain } from './types';

export type LegsOutcome = 'confirmed' | 'pending' | 'reverted';

/**
 * Re-reads each outgoing settlement transfer at the confirmation depth and marks it. The whole is
 * confirmed when every leg is, reverted as soon as one is; legs already reverted (or replaced) are
 * skipped. Shared by Payment and deposit settlements.
 */
export async function checkSettlementLegs(
  chain: Pick<Chain, 'getTransactionStatus'>,
  legs: Array<{ txHash: string; status: string }>,
  confirmations: number,
): Promise<LegsOutcome> {
  let outcome: LegsOutcome = 'confirmed';
  for (const leg of legs) {
    if (leg.status === 'reverted' || leg.status === 'replaced') continue;
    const status = await chain.getTransactionStatus(leg.txHash as Hash, confirmations);
    if (status === 'reverted') {
      leg.status = 'reverted';
      outcome = 'reverted';
    } else if (status === 'confirmed') {
      leg.status = 'confirmed';
    } else if (outcome !== 'reverted') {
      outcome = 'pending';
    }
  }
  return outcome;
}
