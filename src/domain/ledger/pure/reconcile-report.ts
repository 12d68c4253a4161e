/**
 * What a reconciliation of the books against the chain reports (src/domain/ledger/reconcile.ts). Types
 * only, so the reconciliation workflow and its contract can carry them (a pure/ module).
 */

/** escrow | deposit | vault | treasury | platform_fees | partner_fees, or the custody purpose of an address with no owner. */
export type AddressPurpose = string;

export interface BooksDifference {
  /** Checksummed; null for books whose address the service does not know. */
  address: string | null;
  purpose: AddressPurpose;
  /** The book(s) compared: `fees:partner:*` is the sum of every partner's; null when none. */
  book: string | null;
  chainId: number;
  token: string;
  ledgerAtomic: string;
  chainAtomic: string;
  inFlightAtomic: string;
  /** chain - ledger - inFlight: positive, the chain holds money the books don't know; negative, money is missing. */
  differenceAtomic: string;
}

export interface InFlightAmount {
  address: string;
  purpose: AddressPurpose;
  chainId: number;
  token: string;
  /** + arriving, - leaving. */
  amountAtomic: string;
  kind: 'payment_transfer' | 'deposit_receipt' | 'vault_receipt' | 'settlement_leg';
  /** The leg's or receipt's source: a vault receipt is 'vault' (sourceId the vault), a vault's funding leg 'vault_funding'. */
  sourceType: 'payment' | 'deposit' | 'vault' | 'vault_funding' | 'refund' | 'incident_recovery';
  sourceId: string;
  txHash: string;
}

export interface ReconcileResult {
  ok: boolean;
  /** The block each network's balances were read at. */
  heads: Array<{ chainId: number; blockNumber: string }>;
  /** (address, asset) balances compared. */
  checked: number;
  inFlight: InFlightAmount[];
  differences: BooksDifference[];
}

export interface ReconcilePage extends ReconcileResult {
  /** Pass as afterAddress for the next page; null after the last one. */
  next: string | null;
}
