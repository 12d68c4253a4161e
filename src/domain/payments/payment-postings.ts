import { bookFor, type PostingInput } from '../ledger/ledger';
import type { Payment } from '../../generated/prisma/client';

/**
 * The Payment's ledger postings: collection when escrow is funded, settlement when it is paid out,
 * and funds held for recovery (incidents). Pure functions of the stored Payment.
 */
function asset(p: Payment) {
  return { chainId: p.chainId, tokenAddress: p.tokenAddress, symbol: p.assetCode, decimals: p.decimals };
}

/** The UPA whose money escrow holds: the recipient's for a receive Payment, the sender's for a send. */
function escrowOwner(p: Payment): string {
  return p.senderAccountId ?? p.recipientAccountId;
}

export function collectionPosting(p: Payment): PostingInput {
  const gross = BigInt(p.amountAtomic.toString());
  const transactions: NonNullable<PostingInput['transactions']> = [
    {
      accountId: p.recipientAccountId,
      direction: 'received',
      senderAccountId: p.senderAccountId,
      receiverAccountId: p.recipientAccountId,
      amountAtomic: gross,
      status: 'pending',
      financialLegKind: 'collection',
      paymentId: p.id,
      description: p.description,
    },
  ];
  if (p.senderAccountId) {
    transactions.push({ ...transactions[0]!, accountId: p.senderAccountId, direction: 'sent' });
  }
  return {
    appId: p.appId,
    sourceType: 'payment',
    sourceId: p.id,
    leg: 'collection',
    asset: asset(p),
    description: `Payment ${p.id} funded escrow`,
    entries: [
      { book: bookFor('escrow', p.id), amountAtomic: gross, accountId: escrowOwner(p) },
      { book: bookFor('external', p.chainId), amountAtomic: -gross },
    ],
    transactions,
  };
}

export function settlementPosting(p: Payment): PostingInput {
  const gross = BigInt(p.amountAtomic.toString());
  const entries: PostingInput['entries'] = [
    { book: bookFor('escrow', p.id), amountAtomic: -gross, accountId: escrowOwner(p) },
    { book: bookFor('upa_settled', p.recipientAccountId), amountAtomic: BigInt(p.merchantNetAtomic.toString()) },
  ];
  const platform = BigInt(p.platformFeeAtomic.toString());
  const partner = BigInt(p.partnerFeeAtomic.toString());
  if (platform > 0n) entries.push({ book: bookFor('platform_fees'), amountAtomic: platform });
  if (partner > 0n) entries.push({ book: bookFor('partner_fees', p.appId), amountAtomic: partner });
  return {
    appId: p.appId,
    sourceType: 'payment',
    sourceId: p.id,
    leg: 'settlement',
    asset: asset(p),
    description: `Payment ${p.id} settled to the recipient's destination`,
    entries,
  };
}

/**
 * Funds that reached escrow but don't count for the Payment (underpaid at expiry, late, excess,
 * duplicate, dust) still sit in custody: escrow holdings attributed to the recipient, visible in its
 * balances (pending) and transactions until they are recovered.
 */
export function incidentPosting(p: Payment, incident: { id: string; kind: string }, amountAtomic: bigint): PostingInput {
  return {
    appId: p.appId,
    sourceType: 'payment',
    sourceId: p.id,
    leg: `incident:${incident.id}`,
    asset: asset(p),
    description: `Funds held for recovery on Payment ${p.id} (${incident.kind})`,
    entries: [
      { book: bookFor('escrow', p.id), amountAtomic, accountId: p.recipientAccountId },
      { book: bookFor('external', p.chainId), amountAtomic: -amountAtomic },
    ],
    transactions: [
      {
        accountId: p.recipientAccountId,
        direction: 'received',
        senderAccountId: null,
        receiverAccountId: p.recipientAccountId,
        amountAtomic,
        status: 'pending',
        financialLegKind: 'recovery_hold',
        paymentId: p.id,
      },
    ],
  };
}
