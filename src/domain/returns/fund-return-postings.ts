import { bookFor, type LedgerAsset, type PostingInput } from '../ledger/ledger';

/**
 * The postings of a confirmed return, keyed (sourceType 'payment', sourceId = the Payment, leg
 * 'refund:<id>' | 'recovery:<id>'):
 *
 *   recovery:<id>  escrow:<paymentId> -amount (recipient)   external:<chainId> +amount
 *                  the incident's funds leave escrow (incidentPosting had put them there)
 *   refund:<id>    custody:vault:<vaultId> -amount          external:<chainId> +amount
 *                  the recipient's vault pays the payer back (its receipts put the money there)
 *
 * Each carries the recipient's partner-visible Transaction (direction sent).
 */
export interface ReturnFacts {
  id: string;
  kind: 'refund' | 'incident_recovery';
  appId: string;
  paymentId: string;
  recipientAccountId: string;
  vaultId: string | null;
  amountAtomic: bigint;
  asset: LedgerAsset;
}

export function fundReturnPosting(r: ReturnFacts): PostingInput {
  const refund = r.kind === 'refund';
  const from = refund
    ? { book: bookFor('vault_custody', r.vaultId!), amountAtomic: -r.amountAtomic }
    : { book: bookFor('escrow', r.paymentId), amountAtomic: -r.amountAtomic, accountId: r.recipientAccountId };
  return {
    appId: r.appId,
    sourceType: 'payment',
    sourceId: r.paymentId,
    leg: `${refund ? 'refund' : 'recovery'}:${r.id}`,
    asset: r.asset,
    description: refund
      ? `Refund ${r.id} of Payment ${r.paymentId} from the recipient's vault`
      : `Incident funds of Payment ${r.paymentId} returned (${r.id})`,
    entries: [from, { book: bookFor('external', r.asset.chainId), amountAtomic: r.amountAtomic }],
    transactions: [
      {
        accountId: r.recipientAccountId,
        direction: 'sent',
        senderAccountId: r.recipientAccountId,
        receiverAccountId: null,
        amountAtomic: r.amountAtomic,
        status: 'posted',
        financialLegKind: refund ? 'refund' : 'incident_recovery',
        paymentId: r.paymentId,
      },
    ],
  };
}
