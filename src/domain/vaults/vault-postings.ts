import { bookFor, type LedgerAsset, type PostingInput } from '../ledger/ledger';

/**
 * The ledger postings of a vault (sourceType 'vault', sourceId = vault id), one leg per event:
 *
 *   receipt:<receiptId>           custody:vault:<vaultId> +amount   external:<chainId> -amount
 *                                 an ERC-20 transfer into the vault, at the network's confirmation depth
 *   receipt_reversal:<receiptId>  custody:vault:<vaultId> -amount   external:<chainId> +amount
 *                                 a posted receipt gone from the canonical chain (a reorg deeper than the depth)
 *   funding:<fundingOperationId>  custody:vault:<vaultId> -amount   external:<chainId> +amount
 *                                 the vault -> escrow leg, confirmed (same transaction as the operation)
 *
 * Why funding credits external and not escrow: the Payment verifies the vault's transfer like any
 * payer's and posts its own collection (escrow +amount, external -amount). The funding posting hands
 * the money back to the contra book the collection takes it from, so over the three postings escrow
 * holds the amount, the vault nothing, and external is down by exactly what came from outside: each
 * book equals its address on chain and nothing is counted twice, whichever of funding and collection
 * posts first.
 *
 * Vault entries carry no accountId: account balances (balances.ts) project escrow and settled money,
 * and a vault's balance is read from the chain (GET .../vault). No UPA-facing Transactions either.
 */
export interface VaultReceiptFacts {
  id: string;
  vaultId: string;
  appId: string;
  chainId: number;
  tokenAddress: string;
  assetSymbol: string;
  decimals: number;
  amountAtomic: { toString(): string };
  txHash: string;
}

export interface VaultFundingFacts {
  id: string;
  vaultId: string;
  appId: string;
  paymentId: string;
  amountAtomic: { toString(): string };
  asset: LedgerAsset;
}

const receiptAsset = (r: VaultReceiptFacts): LedgerAsset => ({
  chainId: r.chainId,
  tokenAddress: r.tokenAddress,
  symbol: r.assetSymbol,
  decimals: r.decimals,
});

/** The vault's book +amount, external -amount (or the reverse, sign = -1). */
function vaultMove(appId: string, vaultId: string, asset: LedgerAsset, leg: string, description: string, amount: bigint): PostingInput {
  return {
    appId,
    sourceType: 'vault',
    sourceId: vaultId,
    leg,
    asset,
    description,
    entries: [
      { book: bookFor('vault_custody', vaultId), amountAtomic: amount },
      { book: bookFor('external', asset.chainId), amountAtomic: -amount },
    ],
  };
}

export function vaultReceiptPosting(r: VaultReceiptFacts): PostingInput {
  const amount = BigInt(r.amountAtomic.toString());
  return vaultMove(r.appId, r.vaultId, receiptAsset(r), `receipt:${r.id}`, `Vault ${r.vaultId} received ${r.txHash}`, amount);
}

export function vaultReceiptReversalPosting(r: VaultReceiptFacts): PostingInput {
  const amount = BigInt(r.amountAtomic.toString());
  return vaultMove(
    r.appId,
    r.vaultId,
    receiptAsset(r),
    `receipt_reversal:${r.id}`,
    `Vault ${r.vaultId} receipt ${r.txHash} reversed: gone from the chain`,
    -amount,
  );
}

export function vaultFundingPosting(f: VaultFundingFacts): PostingInput {
  const amount = BigInt(f.amountAtomic.toString());
  return vaultMove(f.appId, f.vaultId, f.asset, `funding:${f.id}`, `Vault ${f.vaultId} funded Payment ${f.paymentId} (${f.id})`, -amount);
}
