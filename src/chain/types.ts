import type { Address, Hash, Hex, LocalAccount } from 'viem';
import type { FeePolicy, Fees } from './fees';
import type { GasCost } from './gas-cover';

/**
 * What the Payments and Deposits features need from a chain, and nothing more, so they can be tested
 * against a fake and so another chain family can sit behind the same shape. Amounts are atomic units
 * (bigint), never floats.
 */

/**
 * One ERC-20 `Transfer` log. It is identified by (chainId, txHash, recipient, ordinal): a reorg can
 * mine the same transaction again in another block, at another log index, but within the transaction
 * its transfers keep their order. logIndex is where it was last seen.
 */
export interface Transfer {
  chainId: number;
  txHash: Hash;
  logIndex: number;
  /** Its position among the transaction's transfers of this token to this recipient (0 for the first). */
  ordinal: number;
  blockNumber: bigint;
  blockHash: Hash;
  token: Address;
  from: Address;
  to: Address;
  amountAtomic: bigint;
}

export interface TransferQuery {
  token: Address;
  /** Only transfers to these recipients; `undefined` means every recipient, `[]` means none. */
  to: readonly Address[] | undefined;
  fromBlock: bigint;
  toBlock: bigint;
}

export interface VerifyTransferQuery {
  txHash: Hash;
  /** The transfer's position within its transaction (see Transfer.ordinal). */
  ordinal?: number;
  /** Legacy identity (transfers recorded before ordinals): the log index it was seen at. */
  logIndex?: number;
  token: Address;
  to: Address;
  /** Required depth; the block holding the transaction counts as the first confirmation. */
  confirmations: number;
}

export type NotFoundReason =
  | 'unknown_transaction' // never seen, or reorged away and not re-broadcast
  | 'not_canonical' // the receipt's block is no longer on the canonical chain
  | 'reverted'
  | 'no_such_log'
  | 'not_a_matching_transfer'; // the log exists but is not a Transfer of `token` to `to`

export type TransferVerification =
  | { status: 'confirmed'; transfer: Transfer; confirmations: number }
  | { status: 'pending'; confirmations: number }
  | { status: 'not_found'; reason: NotFoundReason };

export type TransactionStatus = 'confirmed' | 'pending' | 'reverted' | 'not_found';

/** A key the service controls (see src/custody); a KMS/MPC signer fits the same viem shape. */
export type Signer = LocalAccount;

export interface TokenTransferRequest {
  from: Signer;
  token: Address;
  to: Address;
  amountAtomic: bigint;
  /**
   * The settlement's reserved nonce. Passing it is what makes a retried send safe: see `Chain.broadcast`.
   * Omitted, the next pending nonce of `from` is used, which is only safe for one-off sends.
   */
  nonce?: number;
  /** Called once the gas limit and fees are fixed, before signing: the payer is made to hold what it costs. */
  cover?: GasCoverHook;
}

export interface NativeTransferRequest {
  from: Signer;
  to: Address;
  amountWei: bigint;
  nonce?: number;
  cover?: GasCoverHook;
}

/** Makes the sender hold what the transaction it is about to sign may cost (src/chain/gas-cover.ts). */
export type GasCoverHook = (tx: GasCost) => Promise<void>;

/** A signed transaction whose hash is known before it is broadcast, so it can be recorded first. */
export interface SignedTransaction {
  txHash: Hash;
  serialized: Hex;
  nonce: number;
}

export interface Chain {
  readonly chainId: number;
  /** The network's fee cap and tip: every transaction signed for it is type 2 within them. */
  readonly feePolicy: FeePolicy;
  /** The latest block's base fee per gas. */
  getBaseFee(): Promise<bigint>;
  getBlockNumber(): Promise<bigint>;
  /** The canonical block hash at a height, or null above the head (reorg detection). */
  getBlockHash(blockNumber: bigint): Promise<Hash | null>;
  /** The canonical block at a height, its hash and timestamp (seconds), or null above the head. */
  getBlockHeader(blockNumber: bigint): Promise<{ hash: Hash; timestamp: bigint } | null>;
  /** Transfer logs in [fromBlock, toBlock], ordered by block then log index. */
  getTransfers(query: TransferQuery): Promise<Transfer[]>;
  /** The ERC-20 Transfer logs of a mined transaction (empty when it is not mined). */
  getTransactionTransfers(txHash: Hash): Promise<Transfer[]>;
  /** Re-reads the receipt and the canonical chain, so a reorged-away transfer is `not_found`. */
  verifyTransfer(query: VerifyTransferQuery): Promise<TransferVerification>;

  signTokenTransfer(request: TokenTransferRequest): Promise<SignedTransaction>;
  /** What signing this transfer now would cost its sender (gas limit, fee cap, value); FeeAboveCapError above the cap. */
  tokenTransferCost(request: TokenTransferRequest): Promise<GasCost>;
  signNativeTransfer(request: NativeTransferRequest): Promise<SignedTransaction>;
  /** The same transaction (nonce, recipient, data, value, gas limit) signed again with other fees. */
  signReplacement(request: { from: Signer; original: Hex; fees: Fees }): Promise<SignedTransaction>;
  /**
   * Broadcasts a signed transaction and answers its hash. Idempotent: re-broadcasting the same signed
   * transaction (already pending or mined) answers the same hash instead of failing. If a *different*
   * transaction already used that signer's nonce, it throws `NonceAlreadyUsedError`, so a retry that
   * re-signed can never pay twice.
   */
  broadcast(tx: SignedTransaction | Hex): Promise<Hash>;
  /** sign + broadcast. For exactly-once settlement, reserve the nonce and pass it (see `broadcast`). */
  sendTokenTransfer(request: TokenTransferRequest): Promise<Hash>;
  sendNative(request: NativeTransferRequest): Promise<Hash>;
  /** `pending` also covers "mined, but fewer than `confirmations` deep". */
  getTransactionStatus(txHash: Hash, confirmations: number): Promise<TransactionStatus>;
  /**
   * Next nonce of `address`; `pending` includes transactions still in the mempool; `finalized` counts
   * only blocks the chain has finalized (no reorg can take them back).
   */
  getNonce(address: Address, blockTag?: 'latest' | 'pending' | 'finalized'): Promise<number>;
  /** At `blockNumber` when given (reconciliation reads every balance at one block), else at the head. */
  getTokenBalance(query: { token: Address; owner: Address; blockNumber?: bigint }): Promise<bigint>;
  /** Many owners' balances at one block, in JSON-RPC batches (one round trip per batch), in order. */
  getTokenBalances(query: { token: Address; owners: Address[]; blockNumber: bigint }): Promise<bigint[]>;
  /**
   * Where a transaction is on the canonical chain: the block that holds it and whether it succeeded,
   * or null when it is not mined (yet), or its block was reorged away.
   */
  getTransactionInclusion(txHash: Hash): Promise<{ blockNumber: bigint; success: boolean } | null>;
  getNativeBalance(address: Address): Promise<bigint>;
}

/** The signer's nonce was consumed by another transaction: the thing a settlement retry must not redo. */
export class NonceAlreadyUsedError extends Error {
  constructor(
    readonly signer: Address,
    readonly nonce: number,
  ) {
    super(`nonce ${nonce} of ${signer} is already used by another transaction`);
    this.name = 'NonceAlreadyUsedError';
  }
}

/** The base fee plus the tip is above the network's cap: nothing is signed; a later attempt tries again. */
export class FeeAboveCapError extends Error {
  constructor(
    readonly chainId: number,
    readonly neededWei: bigint,
    readonly capWei: bigint,
  ) {
    super(`chain ${chainId}: fees need ${neededWei} wei per gas, above the cap of ${capWei}`);
    this.name = 'FeeAboveCapError';
  }
}
