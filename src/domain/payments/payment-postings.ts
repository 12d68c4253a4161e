import { bookFor, type LedgerAsset, type PostingInput } from '../ledger/ledger';
import type { Payment, PaymentPayout } from '../../generated/prisma/client';

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

/**
 * A bank Payment's settlement: the net went to the provider's deposit address (held there for the
 * payout, book offramp:<P>), the fees to the fee wallets.
 */
export function providerSettlementPosting(p: Payment, payout: PaymentPayout): PostingInput {
  const posting = settlementPosting(p);
  const net = BigInt(payout.sourceAtomic.toString());
  return {
    ...posting,
    description: `Payment ${p.id} settled to the off-ramp provider`,
    entries: posting.entries.map((e) =>
      e.book === bookFor('upa_settled', p.recipientAccountId) ? { book: bookFor('offramp', p.id), amountAtomic: net } : e,
    ),
  };
}

/** The provider paid the bank account: the stablecoin it held for the Payment has left for good. */
export function payoutPosting(p: Payment, payout: PaymentPayout): PostingInput {
  const net = BigInt(payout.sourceAtomic.toString());
  return {
    appId: p.appId,
    sourceType: 'payment',
    sourceId: p.id,
    leg: 'payout',
    asset: asset(p),
    description: `Payment ${p.id} paid out to bank account ${payout.bankAccountId}`,
    entries: [
      { book: bookFor('offramp', p.id), amountAtomic: -net },
      { book: bookFor('external', p.chainId), amountAtomic: net },
    ],
  };
}

/** The payout came back after success: the reversal of payoutPosting (the provider holds it again, until its refund reaches escrow). */
export function payoutReturnedPosting(p: Payment, payout: PaymentPayout): PostingInput {
  const reversed = payoutPosting(p, payout);
  return {
    ...reversed,
    leg: 'payout_returned',
    description: `Payment ${p.id}: the bank payout was returned`,
    entries: reversed.entries.map((e) => ({ ...e, amountAtomic: -e.amountAtomic })),
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
/** Funds held for recovery, in the Payment's asset unless another is given (a foreign transfer's: its own chain and token). */
export function incidentPosting(
  p: Payment,
  incident: { id: string; kind: string },
  amountAtomic: bigint,
  held: LedgerAsset = asset(p),
): PostingInput {
  // A payout refund comes from the provider's holding for this Payment; it and a lapsed quote's funds
  // are the payer's (recoverable to the sender).
  const counterpart = incident.kind === 'payout_refund' ? bookFor('offramp', p.id) : bookFor('external', held.chainId);
  const owner = incident.kind === 'payout_refund' || incident.kind === 'quote_expired' ? escrowOwner(p) : p.recipientAccountId;
  return {
    appId: p.appId,
    sourceType: 'payment',
    sourceId: p.id,
    leg: `incident:${incident.id}`,
    asset: held,
    description: `Funds held for recovery on Payment ${p.id} (${incident.kind})`,
    entries: [
      { book: bookFor('escrow', p.id), amountAtomic, accountId: owner },
      { book: counterpart, amountAtomic: -amountAtomic },
    ],
    transactions: [
      {
        accountId: owner,
        direction: 'received',
        senderAccountId: null,
        receiverAccountId: owner,
        amountAtomic,
        status: 'pending',
        financialLegKind: 'recovery_hold',
        paymentId: p.id,
      },
    ],
  };
}
