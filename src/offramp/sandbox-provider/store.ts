import { mkdirSync, readFileSync, renameSync, writeFileSync, fsyncSync, openSync, closeSync } from 'node:fs';
import path from 'node:path';
import type { TPayoutRequest } from './contract';

/**
 * The sandbox provider's whole state, one JSON file under its data dir, rewritten atomically (a temp
 * file, fsync, rename) after every change: a restarted provider still knows its payouts, so a retry
 * after a crash finds the payout instead of making a second one (as a real provider would).
 */

export interface StoredQuote {
  quoteId: string;
  idempotencyKey: string;
  requestHash: string;
  sourceAmountAtomic: string;
  providerPrincipalAtomic: string;
  providerFeeAtomic: string;
  rate: string;
  destinationAmount: string;
  currency: string;
  chainId: number;
  tokenAddress: string;
  depositAddress: string;
  expiresAt: string;
}

export interface StoredBankAccount {
  bankAccountId: string;
  providerAccountId: string;
  /** A hash of the registration (the account number is never stored in clear). */
  requestHash: string;
  accountNumberLast4: string;
  status: 'pending' | 'verified' | 'failed';
  failureReason: string | null;
  /** What verification will decide (sandbox magic values), applied after the verify delay. */
  outcome: { status: 'verified' | 'failed'; failureReason: string | null };
}

export interface StoredPayout {
  payoutId: string;
  paymentId: string;
  requestHash: string;
  request: Omit<TPayoutRequest, 'sandboxScenario'>;
  scenario: NonNullable<TPayoutRequest['sandboxScenario']>;
  status: 'submitted' | 'processing' | 'completed' | 'failed' | 'returned';
  /** `uncertain` scenario: the status is hidden (answered as `uncertain`) until resolved. */
  uncertain: boolean;
  reasonCode: string | null;
  refundTxHash: string | null;
  /** A refund owed on chain (failed after funding, or returned) and not yet sent. */
  refundPending: { status: 'failed' | 'returned'; reasonCode: string } | null;
  returnAt: string | null;
  updatedAt: string;
}

export interface ProviderState {
  quotes: Record<string, StoredQuote>;
  quoteKeys: Record<string, string>;
  bankAccounts: Record<string, StoredBankAccount>;
  payouts: Record<string, StoredPayout>;
  /** Requests seen per payout idempotency key (the timeout and error_5xx scenarios count them). */
  payoutRequests: Record<string, number>;
  fundingTxHashes: Record<string, string>;
}

const EMPTY: ProviderState = { quotes: {}, quoteKeys: {}, bankAccounts: {}, payouts: {}, payoutRequests: {}, fundingTxHashes: {} };

export class ProviderStore {
  readonly state: ProviderState;
  private readonly file: string;

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.file = path.join(dataDir, 'state.json');
    let loaded: ProviderState;
    try {
      loaded = { ...EMPTY, ...(JSON.parse(readFileSync(this.file, 'utf8')) as Partial<ProviderState>) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      loaded = structuredClone(EMPTY);
    }
    this.state = loaded;
  }

  /** Writes the state: a crash leaves either the old file or the new one, never half of one. */
  save(): void {
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.state));
    const fd = openSync(tmp, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.file);
  }
}
