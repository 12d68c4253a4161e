import { bookFor, type LedgerAsset, type PostingInput } from '../ledger/ledger';
import type { Deposit } from '../../generated/prisma/client';

/**
 * The ledger postings of a deposit (sourceType 'deposit', sourceId = deposit id), one per leg:
 *
 *   receipt           custody:deposit:<addr> +gross (account)   external:<chainId> -gross
 *                     + the account's Transaction (received, 'deposit', pending; posted once settled)
 *   settlement        custody:deposit:<addr> -gross (account)   upa:<account>:settled +net
 *                     fees:platform +platformFee                fees:partner:<appId> +partnerFee
 *   receipt_reversal  an operator failed a held deposit: its receipt Transaction -> reversed, and the
 *                     funds, still at the address, stay in custody held for recovery (custody line
 *                     out and in again, with a pending recovery_hold Transaction): the books still
 *                     equal the chain
 *   held              a transfer under the minimum (ignored): custody +amount (account), external
 *                     -amount, a pending recovery_hold Transaction; nothing is owed or settled
 *   reversal          receipt + settlement negated (the source transfer was invalidated after
 *                     settlement): external +gross, upa:<account>:settled -net, fees negated;
 *                     Transaction -> reversed
 *
 * Zero amounts (e.g. a 0 bps fee) are left out: the ledger refuses zero entries.
 */
type DepositFacts = Pick<
  Deposit,
  | 'id'
  | 'appId'
  | 'accountId'
  | 'depositAddressId'
  | 'chainId'
  | 'tokenAddress'
  | 'assetSymbol'
  | 'decimals'
  | 'amountAtomic'
  | 'platformFeeAtomic'
  | 'partnerFeeAtomic'
  | 'netAtomic'
>;

const big = (d: { toString(): string }) => BigInt(d.toString());

export function depositAsset(d: DepositFacts): LedgerAsset {
  return { chainId: d.chainId, tokenAddress: d.tokenAddress, symbol: d.assetSymbol, decimals: d.decimals };
}

function nonZero(entries: PostingInput['entries']): PostingInput['entries'] {
  return entries.filter((e) => e.amountAtomic !== 0n);
}

/** Money that came in from outside to the deposit address, for the account, with its Transaction. */
function inflowPosting(d: DepositFacts, leg: string, description: string, financialLegKind: string): PostingInput {
  const gross = big(d.amountAtomic);
  return {
    appId: d.appId,
    sourceType: 'deposit',
    sourceId: d.id,
    leg,
    asset: depositAsset(d),
    description,
    entries: [
      { book: bookFor('deposit_custody', d.depositAddressId), amountAtomic: gross, accountId: d.accountId },
      { book: bookFor('external', d.chainId), amountAtomic: -gross },
    ],
    transactions: [pendingReceived(d, gross, financialLegKind)],
  };
}

export function receiptPosting(d: DepositFacts): PostingInput {
  return inflowPosting(d, 'receipt', `Deposit ${d.id} received at deposit address ${d.depositAddressId}`, 'deposit');
}

export function settlementPosting(d: DepositFacts): PostingInput {
  return {
    appId: d.appId,
    sourceType: 'deposit',
    sourceId: d.id,
    leg: 'settlement',
    asset: depositAsset(d),
    description: `Deposit ${d.id} settled to the account's destination`,
    entries: nonZero([
      { book: bookFor('deposit_custody', d.depositAddressId), amountAtomic: -big(d.amountAtomic), accountId: d.accountId },
      { book: bookFor('upa_settled', d.accountId), amountAtomic: big(d.netAtomic) },
      { book: bookFor('platform_fees'), amountAtomic: big(d.platformFeeAtomic) },
      { book: bookFor('partner_fees', d.appId), amountAtomic: big(d.partnerFeeAtomic) },
    ]),
  };
}

export function receiptReversalPosting(d: DepositFacts): PostingInput {
  const gross = big(d.amountAtomic);
  const custody = bookFor('deposit_custody', d.depositAddressId);
  return {
    appId: d.appId,
    sourceType: 'deposit',
    sourceId: d.id,
    leg: 'receipt_reversal',
    asset: depositAsset(d),
    description: `Deposit ${d.id} failed by an operator: its funds are held for recovery`,
    entries: [
      { book: custody, amountAtomic: -gross, accountId: d.accountId },
      { book: custody, amountAtomic: gross, accountId: d.accountId },
    ],
    transactions: [pendingReceived(d, gross, 'recovery_hold')],
  };
}

/** Funds under the minimum (an ignored deposit) still reached the address: held for recovery. */
export function heldPosting(d: DepositFacts): PostingInput {
  return inflowPosting(
    d,
    'held',
    `Deposit ${d.id} under the minimum: held for recovery at deposit address ${d.depositAddressId}`,
    'recovery_hold',
  );
}

function pendingReceived(d: DepositFacts, amountAtomic: bigint, financialLegKind: string) {
  return {
    accountId: d.accountId,
    direction: 'received' as const,
    senderAccountId: null,
    receiverAccountId: d.accountId,
    amountAtomic,
    status: 'pending' as const,
    financialLegKind,
  };
}

export function reversalPosting(d: DepositFacts): PostingInput {
  const gross = big(d.amountAtomic);
  // receipt negated (custody -gross, external +gross) plus settlement negated (custody +gross, ...):
  // the custody lines cancel, so the posting moves external, the settled book and the fee books.
  return {
    appId: d.appId,
    sourceType: 'deposit',
    sourceId: d.id,
    leg: 'reversal',
    asset: depositAsset(d),
    description: `Deposit ${d.id} reversed: its source transfer is no longer valid`,
    entries: nonZero([
      { book: bookFor('external', d.chainId), amountAtomic: gross },
      { book: bookFor('upa_settled', d.accountId), amountAtomic: -big(d.netAtomic) },
      { book: bookFor('platform_fees'), amountAtomic: -big(d.platformFeeAtomic) },
      { book: bookFor('partner_fees', d.appId), amountAtomic: -big(d.partnerFeeAtomic) },
    ]),
  };
}
