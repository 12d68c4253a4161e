import type { Hash } from 'viem';
import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import { ApiError } from '../requests/errors';
import { legId, type SettlementSource } from './settlement-legs';

/** What an operator's hand-made payout must be: this much of this token, from our address to the destination. */
export interface ExpectedPayout {
  chainId: number;
  token: string;
  from: string;
  to: string;
  amountAtomic: bigint;
  confirmations: number;
}

/**
 * An operator who paid a held settlement out by hand names the transaction (mark-settled). The ledger
 * will say "settled" on the strength of it, so it is checked against the chain first: mined on the
 * canonical chain at the confirmation depth, succeeded, and carrying a Transfer of exactly the expected
 * amount of the expected token from the service's address to the expected destination. Answers why
 * not, or null when it is such a payout.
 */
export async function payoutProblem(chains: Pick<ChainRegistry, 'get'>, txHash: string, expected: ExpectedPayout): Promise<string | null> {
  const chain = chains.get(expected.chainId);
  const status = await chain.getTransactionStatus(txHash as Hash, expected.confirmations);
  if (status === 'not_found') return `transaction ${txHash} is not on the chain`;
  if (status === 'reverted') return `transaction ${txHash} reverted`;
  if (status === 'pending') return `transaction ${txHash} is not ${expected.confirmations} blocks deep yet`;
  const transfers = await chain.getTransactionTransfers(txHash as Hash);
  const pays = transfers.some(
    (t) =>
      t.token.toLowerCase() === expected.token.toLowerCase() &&
      t.from.toLowerCase() === expected.from.toLowerCase() &&
      t.to.toLowerCase() === expected.to.toLowerCase() &&
      t.amountAtomic === expected.amountAtomic,
  );
  return pays
    ? null
    : `transaction ${txHash} does not move ${expected.amountAtomic} of ${expected.token} from ${expected.from} to ${expected.to}`;
}

/**
 * payoutProblem as a refusal an operator sees (the CLI exits 1 with the reason). Also refused while
 * the service's own net leg for this settlement is signed and may still be mined: both would pay.
 */
export async function requirePayout(
  deps: { prisma: PrismaClient; chains: Pick<ChainRegistry, 'get'> },
  source: SettlementSource,
  txHash: string,
  expected: ExpectedPayout,
): Promise<void> {
  const inFlight = await deps.prisma.settlementLeg.findFirst({
    where: { sourceType: source.type, sourceId: source.id, leg: 'net', status: 'broadcast' },
  });
  if (inFlight && inFlight.txHash !== txHash.toLowerCase()) {
    const problem = `the service's own net leg ${inFlight.txHash} may still be mined; mark-settled with that hash once it is, or replace it first`;
    throw new ApiError('bad_request', `mark-settled refused: ${problem}`, { fields: [{ field: 'txHash', message: problem }] });
  }
  const problem = await payoutProblem(deps.chains, txHash, expected);
  if (problem) throw new ApiError('bad_request', `mark-settled refused: ${problem}`, { fields: [{ field: 'txHash', message: problem }] });
}

/**
 * Records the operator's payout as the settlement's net leg (confirmed; there are no signed bytes to
 * re-send), so the one settlement sender then pays only the legs still owed (the fees) and the books
 * end equal to the chain. Idempotent: the leg id derives from the transaction.
 */
export async function recordManualNetLeg(
  prisma: PrismaClient,
  source: SettlementSource,
  txHash: string,
  payout: ExpectedPayout,
): Promise<void> {
  await prisma.settlementLeg.createMany({
    data: [
      {
        id: legId(txHash),
        sourceType: source.type,
        sourceId: source.id,
        leg: 'net',
        chainId: payout.chainId,
        fromAddress: payout.from.toLowerCase(),
        toAddress: payout.to.toLowerCase(),
        tokenAddress: payout.token.toLowerCase(),
        amountAtomic: payout.amountAtomic.toString(),
        nonce: -1,
        txHash: txHash.toLowerCase(),
        serialized: '',
        status: 'confirmed',
      },
    ],
    skipDuplicates: true,
  });
}
