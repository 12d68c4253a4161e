/**
 * The off-ramp provider, as the service sees it: quotes, bank account registration and payouts. The
 * sandbox provider (src/offramp/sandbox-provider/) is a real HTTP service in its own process; the
 * adapter (src/offramp/http-provider.ts) calls it over HTTP with timeouts and idempotency keys, and
 * its signed callbacks arrive at POST /v2/providers/{providerCode}/callbacks.
 *
 * Errors: every method throws ProviderError. `unavailable` (timeout, connection refused, 5xx) is
 * retryable with the same idempotency key; `failure` (a definite refusal) is not; `quote_expired`
 * is the provider refusing a lapsed quote; `uncertain` means the provider may hold a pending payout
 * whose state it can't tell yet (never resubmitted: read, and hold for an operator).
 */
export type ProviderErrorKind = 'unavailable' | 'failure' | 'quote_expired' | 'uncertain';

export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    /** The provider's own code, when it gave one (never a secret). */
    readonly providerCode: string | null = null,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** verifyCallback's providerCode for a correctly signed body that is not a known callback (a 400, not a 401). */
export const MALFORMED_CALLBACK = 'malformed_callback';

export interface ProviderAsset {
  symbol: string;
  decimals: number;
  chainId: number;
  tokenAddress: string;
}

export interface QuoteRequest {
  country: string;
  currency: string;
  rail: string;
  asset: ProviderAsset;
  /** Stablecoin the provider will receive (after the service's own fees), atomic units. */
  sourceAmountAtomic: bigint;
  /** The quote's idempotency key (from the caller's ids); a replay answers the same quote. Default: a fresh one. */
  idempotencyKey?: string;
  /** Sandbox only: `error_5xx` (answered 503) or `expired` (a quote already lapsed). */
  sandboxScenario?: string;
}

export interface Quote {
  quoteId: string;
  /** What the provider converts and pays out (sourceAmountAtomic - providerFeeAtomic), atomic units. */
  providerPrincipalAtomic: bigint;
  providerFeeAtomic: bigint;
  /** Fiat units per 1 unit of the asset, a decimal string. */
  rate: string;
  /** The fiat the bank account receives, a decimal string in `currency`. */
  destinationAmount: string;
  currency: string;
  /** Where the provider takes the stablecoin for this quote (an address on asset.chainId). */
  depositAddress: string;
  expiresAt: Date;
}

export interface BankAccountRegistration {
  /** The service's bank account id: the idempotency key of the registration. */
  bankAccountId: string;
  country: string;
  currency: string;
  accountHolderName: string;
  beneficiaryType: 'individual' | 'business';
  bankCode: string;
  accountNumber: string;
  rail: string;
  /** Country-specific fields (US: routingNumber, accountType). */
  details: Record<string, string>;
}

export type ProviderBankAccountStatus = 'pending' | 'verified' | 'failed';

export interface ProviderBankAccount {
  providerAccountId: string;
  status: ProviderBankAccountStatus;
  failureReason: string | null;
}

export interface PayoutRequest {
  /** The Payment id: the idempotency key, so a retry never makes a second payout. */
  paymentId: string;
  quoteId: string;
  providerAccountId: string;
  amountAtomic: bigint;
  /** The on-chain transfer that delivered amountAtomic to the quote's deposit address. */
  fundingTxHash: string;
  /** Where the provider sends the stablecoin back if the payout fails or is returned. */
  refundAddress: string;
  /** Sandbox only: what the sandbox provider should do with this payout (see docs/decisions/bank-accounts-and-payouts.md). */
  sandboxScenario?: string;
}

/** submitted -> processing -> completed; or failed; a completed payout can later be returned. */
export type PayoutStatus = 'submitted' | 'processing' | 'completed' | 'failed' | 'returned';

export interface Payout {
  payoutId: string;
  paymentId: string;
  status: PayoutStatus;
  /** failed / returned: why (e.g. R01 insufficient funds for an ACH return). */
  reasonCode: string | null;
  /** failed / returned: the provider's on-chain transfer of the stablecoin back to refundAddress. */
  refundTxHash: string | null;
  updatedAt: Date;
}

/**
 * A verified callback from the provider (its signature checked by the adapter): only what it names.
 * Its body's state is never passed on: the service reads the payout or account from the provider.
 */
export type ProviderCallback = { type: 'payout.updated'; paymentId: string } | { type: 'bank_account.updated'; bankAccountId: string };

export interface OfframpProvider {
  readonly code: string;
  quote(request: QuoteRequest): Promise<Quote>;
  registerBankAccount(registration: BankAccountRegistration): Promise<ProviderBankAccount>;
  createPayout(request: PayoutRequest): Promise<Payout>;
  /** The payout for this Payment, or null when the provider has none (it was never created). */
  getPayout(paymentId: string): Promise<Payout | null>;
  /** The provider's current view of a registered bank account (by the service's id), or null when it has none. */
  getBankAccount(bankAccountId: string): Promise<ProviderBankAccount | null>;
  /**
   * Checks a callback's signature and freshness and answers what it names; throws
   * ProviderError('failure') when it is not genuine, with providerCode MALFORMED_CALLBACK when it is
   * genuine but not a callback it knows.
   */
  verifyCallback(rawBody: string, headers: Record<string, string | string[] | undefined>): ProviderCallback;
}
