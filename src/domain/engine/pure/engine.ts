/**
 * What the domain asks of the workflow engine, in the domain's own terms. src/temporal/gateway.ts
 * implements it; each use case is handed only the slice it needs. Types only (pure): the workflow
 * contracts build their inputs and messages from these shapes.
 */
import type { ResolutionRequest } from '../../operators/pure/operator-resolution';

/** What a Payment row says about the workflow it needs. */
export interface PaymentStart {
  id: string;
  intent: string;
  amountAtomic: { toString(): string };
  createdAt: Date;
  expiresAt: Date;
  chainId: number;
  tokenAddress: string;
  escrowAddress: string | null;
  /** A bank Payment's quote expiry (create passes it; a resumed run reads the stored payout). */
  payoutQuoteExpiresAt?: Date | null;
}

/** A bank Payment's payout as the provider reported it (src/domain/payments/pure/payout-machine.ts). */
export interface PayoutUpdateSeen {
  status: 'submitted' | 'processing' | 'completed' | 'failed' | 'returned';
  reasonCode: string | null;
  refundTxHash: string | null;
}

/** A transfer to a Payment's escrow address, as the chain scanner saw it. */
export interface TransferSeen {
  key: string;
  txHash: string;
  logIndex: number;
  amountAtomic: string;
}

/** Where a sandbox app has moved a Payment's clock to: the sum of its moves, in seconds. */
export interface ClockAdvance {
  advancedSeconds: number;
}

export interface CancelRequest {
  reasonCode: string;
  reason: string | null;
}

/**
 * The PaymentWorkflow's answer to a cancel: done (or already done), refused by its rules, none
 * because the workflow has already finished (the stored Payment is then the answer), not stored (the
 * database refused the write: the Payment is held for an operator), or no answer in time (the engine
 * or its worker is unavailable; retry after retryAfterSeconds).
 */
export type CancelOutcome =
  | { outcome: 'cancelled' | 'already_cancelled' }
  | { outcome: 'refused'; reasonCode: string | null; message: string }
  | { outcome: 'closed' }
  | { outcome: 'not_stored'; message: string }
  | { outcome: 'unavailable'; retryAfterSeconds: number };

export interface PaymentEngine {
  /** Idempotent: a Payment has one workflow, and starting it again is a no-op ('exists' while it runs). */
  /** resume: the run takes its state and any transfers no run took from the stored Payment. */
  startPayment(payment: PaymentStart, confirmations: number, opts?: { resume?: boolean }): Promise<'started' | 'exists'>;
  /** Whether the Payment's workflow runs, has closed, or was never started (or is past retention). */
  paymentWorkflowState(paymentId: string): Promise<'running' | 'closed' | 'not_found'>;
  cancelPayment(paymentId: string, request: CancelRequest): Promise<CancelOutcome>;
  /** Hands an operator's resolution to the Payment's workflow, starting it again (from the stored Payment) when it has finished. */
  resolvePayment(payment: PaymentStart, confirmations: number, request: ResolutionRequest): Promise<void>;
  /**
   * Hands a transfer to the Payment's workflow, starting it again (from the stored Payment) when it
   * has finished or never started: the workflow, not the caller, verifies every transfer it counts.
   */
  transferSeen(payment: PaymentStart, confirmations: number, transfer: TransferSeen): Promise<void>;
  /** Hands a provider payout update to a bank Payment's workflow, starting it again (from the stored Payment) when it has finished. */
  payoutUpdated(payment: PaymentStart, confirmations: number, update: PayoutUpdateSeen): Promise<void>;
  /** Tells the Payment's workflow where its sandbox clock stands, starting it again when it has finished. */
  advancePaymentClock(payment: PaymentStart, confirmations: number, advance: ClockAdvance): Promise<void>;
}

/** Who waits on the chain: a Payment (by id) or a deposit (by its workflow's id). */
export type ChainWaiter = { paymentId: string } | { depositWorkflowId: string };

export interface ChainAdvanceEngine {
  /**
   * Tells a workflow waiting on the chain that it advanced to `block` (it re-reads at once). Best
   * effort: a workflow that has finished (or never ran) is skipped, and a lost one costs latency only.
   */
  chainAdvanced(waiter: ChainWaiter, block: bigint): Promise<void>;
}

/** One inbound transfer to a deposit address, as its DepositWorkflow needs it. */
export interface DepositStart {
  depositId: string;
  depositAddressId: string;
  chainId: number;
  txHash: string;
  logIndex: number;
  /** The transfer's place within its transaction (its identity; see src/chain/transfer-key.ts). */
  ordinal: number;
  blockNumber: string;
  tokenAddress: string;
  fromAddress: string;
  toAddress: string;
  amountAtomic: string;
  /** The asset actually transferred (from the network's configuration). */
  asset: { symbol: string; decimals: number };
  /** false when the token is not the asset the deposit address was created for. */
  assetAccepted: boolean;
  minimumDeposit: { amountAtomic: string; inclusive: boolean };
  fees: { platformFeeBps: number; partnerFeeBps: number };
  /** The network's confirmation depth. */
  confirmations: number;
}

/** A deposit, by the id of its workflow (stored with the deposit when it was started). */
export interface DepositRef {
  workflowId: string;
}

/** The vault-to-escrow leg of an authorized funding operation (workflows/vault-funding.ts). */
export interface VaultFundingEngine {
  /** Idempotent: one workflow per funding operation, ever; 'exists' when it was already started. */
  startVaultFunding(fundingOperationId: string, confirmations: number): Promise<'started' | 'exists'>;
}

/** The send of one refund or incident recovery (workflows/fund-return.ts). */
export interface FundReturnEngine {
  /** Idempotent: one workflow per return, ever; 'exists' when it was already started. */
  startFundReturn(returnId: string, confirmations: number): Promise<'started' | 'exists'>;
  /**
   * Hands an operator's resolution to a held return's workflow; a run that ended held (before runs
   * waited for one) is started again with it, and takes it from the stored return.
   */
  resolveFundReturn(returnId: string, confirmations: number, request: ResolutionRequest): Promise<void>;
}

export interface DepositEngine {
  /** Idempotent: one workflow per transfer, ever; 'exists' when it was already started (or finished). */
  startDeposit(start: DepositStart): Promise<'started' | 'exists'>;
  resolveDeposit(deposit: DepositRef, request: ResolutionRequest): Promise<void>;
  /**
   * Hands an operator's resolution to the run of a deposit whose row was refused (it waits for one);
   * a run that failed there instead is started again with it (signal-with-start).
   */
  resolveUnrecordedDeposit(deposit: DepositRef & { start: DepositStart }, request: ResolutionRequest): Promise<void>;
}

/** One delivery round of one webhook event to one endpoint. */
export interface WebhookDeliveryStart {
  deliveryId: string;
  eventId: string;
  endpointId: string;
  round: number;
}

export interface WebhookEngine {
  /** Idempotent: one workflow per (event, endpoint, round). */
  startWebhookDelivery(delivery: WebhookDeliveryStart): Promise<void>;
  /** Wakes the dispatcher now instead of at its next poll; best effort. */
  kickWebhookDispatcher(): Promise<void>;
}

/**
 * What an operator's hold resolutions and incident recoveries need (the CLI, the admin API and the
 * console alike): the resolve signals of Payments and deposits, the start of a recovery's send, and
 * the id under which a Payment's workflow shows in the Temporal Web UI.
 */
export interface OperatorEngine
  extends Pick<PaymentEngine, 'resolvePayment'>, Pick<DepositEngine, 'resolveDeposit' | 'resolveUnrecordedDeposit'>, FundReturnEngine {
  paymentWorkflowId(paymentId: string): string;
  fundReturnWorkflowId(returnId: string): string;
}
