import {
  BaseError,
  BlockNotFoundError,
  NonceTooLowError,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  createPublicClient,
  decodeEventLog,
  defineChain,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  isAddressEqual,
  keccak256,
  parseAbiItem,
  parseTransaction,
  recoverTransactionAddress,
  type Address,
  type Hash,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  type TransactionSerialized,
} from 'viem';
import { rpcTransport } from './transport';
import { DEFAULT_GAS } from '../config/gas';
import { initialFees, type FeePolicy, type Fees } from './fees';
import type { GasCost } from './gas-cover';
import {
  FeeAboveCapError,
  NonceAlreadyUsedError,
  type Chain,
  type GasCoverHook,
  type NativeTransferRequest,
  type SignedTransaction,
  type Signer,
  type TokenTransferRequest,
  type Transfer,
  type TransferVerification,
} from './types';

export interface EvmChainOptions {
  chainId: number;
  rpcUrl: string;
  /** Tried in order when rpcUrl fails (src/chain/transport.ts). */
  fallbackRpcUrls?: string[];
  /** Per-request timeout; a slow node must fail an activity attempt, not hang it. */
  timeoutMs?: number;
  /** The network's fee cap and tip (src/config/gas.ts); every transaction signed here is type 2 under it. */
  gas?: FeePolicy;
}

const TRANSFER_EVENT = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

/**
 * Gas added to a contract call's estimate, which is of the state when it was made. A token transfer
 * estimated while its recipient held tokens pays for rewriting a balance; if the recipient is emptied
 * before the transfer is mined, the balance is written from zero, which costs 17,100 gas more, and the
 * transfer runs out of gas (reverted, nothing moved). Gas left unused is not charged.
 */
const STORAGE_SLOT_HEADROOM_GAS = 25_000n;

/** The `Chain` for any EVM network reachable over JSON-RPC (anvil in tests, a provider in production). */
export function createEvmChain(options: EvmChainOptions): Chain {
  const { chainId } = options;
  const rpcUrls = [options.rpcUrl, ...(options.fallbackRpcUrls ?? [])];
  const gas: FeePolicy = options.gas ?? DEFAULT_GAS;
  const viemChain = defineChain({
    id: chainId,
    name: `evm-${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: rpcUrls } },
  });
  const transport = rpcTransport(rpcUrls, options.timeoutMs);
  // cacheTime 0: viem otherwise caches the block number for seconds, and confirmation counts go stale.
  const client: PublicClient = createPublicClient({ chain: viemChain, transport, cacheTime: 0 });
  const batchClient: PublicClient = createPublicClient({
    chain: viemChain,
    transport: rpcTransport(rpcUrls, options.timeoutMs, { batched: true }),
    cacheTime: 0,
  });

  async function receiptOrNull(hash: Hash): Promise<TransactionReceipt | null> {
    try {
      return await client.getTransactionReceipt({ hash });
    } catch (err) {
      if (err instanceof TransactionReceiptNotFoundError) return null;
      throw err;
    }
  }

  async function isKnown(hash: Hash): Promise<boolean> {
    try {
      await client.getTransaction({ hash });
      return true;
    } catch (err) {
      if (err instanceof TransactionNotFoundError) return false;
      throw err;
    }
  }

  /**
   * Where the receipt's block stands on the canonical chain now: its depth, or undefined when that
   * height holds another block (reorged). Reading the head first, then the block at that height,
   * means a depth we answer was true at the moment of the second read.
   */
  async function canonicalDepth(receipt: TransactionReceipt): Promise<number | undefined> {
    const head = await client.getBlockNumber();
    if (head < receipt.blockNumber) return undefined;
    const block = await client.getBlock({ blockNumber: receipt.blockNumber });
    if (block.hash !== receipt.blockHash) return undefined;
    return Number(head - receipt.blockNumber) + 1;
  }

  async function getBaseFee(): Promise<bigint> {
    const block = await client.getBlock({ blockTag: 'latest' });
    if (block.baseFeePerGas === null) throw new Error(`chain ${chainId} has no base fee (not an EIP-1559 chain)`);
    return block.baseFeePerGas;
  }

  /** Fees for a new transaction from the latest base fee; above the cap nothing is signed (FeeAboveCapError). */
  async function newFees(): Promise<Fees> {
    const baseFee = await getBaseFee();
    const decision = initialFees(baseFee, gas);
    if (decision.kind === 'wait') throw new FeeAboveCapError(chainId, decision.neededWei, gas.maxFeePerGasWei);
    return decision.fees;
  }

  const signContext: SignContext = { client, chainId, newFees };
  const sign = (from: Signer, request: SignRequest) => signTransaction(signContext, from, request);
  const transferCall = (token: Address, to: Address, amountAtomic: bigint) => ({
    to: token,
    data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amountAtomic] }),
  });

  const chain: Chain = {
    chainId,
    feePolicy: gas,
    getBaseFee,

    getBlockNumber: () => client.getBlockNumber(),

    async getBlockHeader(blockNumber) {
      try {
        const block = await client.getBlock({ blockNumber });
        return { hash: block.hash, timestamp: block.timestamp };
      } catch (err) {
        if (err instanceof BlockNotFoundError) return null;
        throw err;
      }
    },
    getBlockHash: async (blockNumber) => (await chain.getBlockHeader(blockNumber))?.hash ?? null,

    async getTransfers({ token, to, fromBlock, toBlock }) {
      if (to !== undefined && to.length === 0) return []; // an empty filter would otherwise match everyone
      const logs = await client.getLogs({
        address: token,
        event: TRANSFER_EVENT,
        args: to === undefined ? undefined : { to: [...to] },
        fromBlock,
        toBlock,
        strict: true, // drops same-signature logs that don't decode as ERC-20 (e.g. ERC-721's)
      });
      const transfers = logs.flatMap((log): Array<Omit<Transfer, 'ordinal'>> =>
        log.blockNumber === null || log.blockHash === null || log.transactionHash === null || log.logIndex === null
          ? [] // pending logs have no position yet
          : [
              {
                chainId,
                txHash: log.transactionHash,
                logIndex: log.logIndex,
                blockNumber: log.blockNumber,
                blockHash: log.blockHash,
                token: getAddress(log.address),
                from: getAddress(log.args.from),
                to: getAddress(log.args.to),
                amountAtomic: log.args.value,
              },
            ],
      );
      transfers.sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
      return withOrdinals(transfers);
    },

    async getTransactionTransfers(txHash) {
      const receipt = await receiptOrNull(txHash);
      return receipt ? withOrdinals(receipt.logs.flatMap((l) => decodeTransfer(chainId, l) ?? [])) : [];
    },

    async verifyTransfer({ txHash, ordinal, logIndex, token, to, confirmations }): Promise<TransferVerification> {
      const receipt = await receiptOrNull(txHash);
      if (!receipt) {
        // Broadcast but not mined yet: it may still land, so the caller should ask again later.
        return (await isKnown(txHash)) ? { status: 'pending', confirmations: 0 } : { status: 'not_found', reason: 'unknown_transaction' };
      }
      if (receipt.status !== 'success') return { status: 'not_found', reason: 'reverted' };
      let transfer: Transfer | undefined;
      if (ordinal !== undefined) {
        // Found by its place in the transaction, wherever a reorg has mined it now.
        const ours = withOrdinals(
          receipt.logs.flatMap((l) => decodeTransfer(chainId, l) ?? []).filter((t) => isAddressEqual(t.token, token)),
        );
        transfer = ours.find((t) => isAddressEqual(t.to, to) && t.ordinal === ordinal);
        if (!transfer) return { status: 'not_found', reason: 'no_such_log' };
      } else {
        const log = receipt.logs.find((l) => l.logIndex === logIndex);
        if (!log) return { status: 'not_found', reason: 'no_such_log' };
        const decoded = decodeTransfer(chainId, log);
        if (!decoded || !isAddressEqual(decoded.token, token) || !isAddressEqual(decoded.to, to)) {
          return { status: 'not_found', reason: 'not_a_matching_transfer' };
        }
        transfer = { ...decoded, ordinal: 0 };
      }
      const depth = await canonicalDepth(receipt);
      if (depth === undefined) return { status: 'not_found', reason: 'not_canonical' };
      if (depth < confirmations) return { status: 'pending', confirmations: depth };
      return { status: 'confirmed', transfer, confirmations: depth };
    },

    signTokenTransfer: ({ from, token, to, amountAtomic, nonce, cover }) =>
      sign(from, { ...transferCall(token, to, amountAtomic), nonce, cover }),

    async tokenTransferCost({ from, token, to, amountAtomic }) {
      const { gasLimit, maxFeePerGas, valueWei } = await gasCost(signContext, from.address, transferCall(token, to, amountAtomic));
      return { gasLimit, maxFeePerGas, valueWei };
    },

    signNativeTransfer: ({ from, to, amountWei, nonce, cover }) => sign(from, { to, value: amountWei, nonce, cover }),

    async signReplacement({ from, original, fees }) {
      const tx = parseTransaction(original);
      if (tx.nonce === undefined || tx.gas === undefined || tx.to == null)
        throw new Error('cannot replace a transaction without nonce, gas or recipient');
      const serialized = await from.signTransaction({
        type: 'eip1559',
        chainId,
        nonce: tx.nonce,
        gas: tx.gas,
        to: tx.to,
        ...(tx.data === undefined ? {} : { data: tx.data }),
        ...(tx.value === undefined ? {} : { value: tx.value }),
        ...fees,
      });
      return { txHash: keccak256(serialized), serialized, nonce: tx.nonce };
    },

    async broadcast(tx) {
      const serialized = typeof tx === 'string' ? tx : tx.serialized;
      const hash = keccak256(serialized);
      try {
        await client.sendRawTransaction({ serializedTransaction: serialized });
        return hash;
      } catch (err) {
        // The same bytes were sent before (a retry, or a timeout that did get through): done already.
        if (await isKnown(hash)) return hash;
        // anvil refuses what geth would queue: a fee below the next block's base fee (a spike past the
        // cap, or one between signing and sending). Nothing is lost (the leg is recorded): it waits.
        if (isBelowBaseFee(err)) throw new FeeAboveCapError(chainId, await getBaseFee(), gas.maxFeePerGasWei);
        if (isNonceTooLow(err)) {
          const signer = await recoverTransactionAddress({ serializedTransaction: serialized as TransactionSerialized });
          throw new NonceAlreadyUsedError(signer, parseTransaction(serialized).nonce ?? -1);
        }
        throw err;
      }
    },

    sendTokenTransfer: async (request: TokenTransferRequest) => chain.broadcast(await chain.signTokenTransfer(request)),

    sendNative: async (request: NativeTransferRequest) => chain.broadcast(await chain.signNativeTransfer(request)),

    async getTransactionStatus(txHash, confirmations) {
      const receipt = await receiptOrNull(txHash);
      const depth = receipt ? await canonicalDepth(receipt) : undefined;
      if (!receipt || depth === undefined) return (await isKnown(txHash)) ? 'pending' : 'not_found';
      if (depth < confirmations) return 'pending';
      return receipt.status === 'success' ? 'confirmed' : 'reverted';
    },

    getNonce: (address, blockTag = 'pending') => client.getTransactionCount({ address, blockTag }),

    getTokenBalance: ({ token, owner, blockNumber }) =>
      client.readContract({
        address: token,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [owner],
        ...(blockNumber === undefined ? {} : { blockNumber }),
      }),

    getTokenBalances: ({ token, owners, blockNumber }) =>
      Promise.all(
        owners.map((owner) =>
          batchClient.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner], blockNumber }),
        ),
      ),

    async getTransactionInclusion(txHash) {
      const receipt = await receiptOrNull(txHash);
      if (!receipt || (await canonicalDepth(receipt)) === undefined) return null;
      return { blockNumber: receipt.blockNumber, success: receipt.status === 'success' };
    },

    getNativeBalance: (address) => client.getBalance({ address }),
  };
  return chain;
}

interface SignRequest {
  to: Address;
  data?: Hex;
  value?: bigint;
  nonce?: number;
  cover?: GasCoverHook;
}

type SignContext = { client: PublicClient; chainId: number; newFees(): Promise<Fees> };

/**
 * What a transaction will cost its sender: fees from the latest base fee (FeeAboveCapError above the
 * cap), the gas limit from the node's estimate of the call alone (no fee fields: a node caps an
 * estimate by balance ÷ fee, and the payer may not be topped up yet).
 */
async function gasCost(ctx: SignContext, from: Address, request: SignRequest): Promise<GasCost & { fees: Fees }> {
  const fees = await ctx.newFees();
  const estimate = await ctx.client.estimateGas({
    account: from,
    to: request.to,
    data: request.data,
    value: request.value,
    prepare: false,
  });
  const gasLimit = estimate + (request.data ? STORAGE_SLOT_HEADROOM_GAS : 0n);
  return { gasLimit, maxFeePerGas: fees.maxFeePerGas, valueWei: request.value ?? 0n, fees };
}

/** Signs a type-2 transaction at its gas cost, once `cover` has made the sender hold what it may cost. */
async function signTransaction(ctx: SignContext, from: Signer, request: SignRequest): Promise<SignedTransaction> {
  try {
    const { fees, ...cost } = await gasCost(ctx, from.address, request);
    await request.cover?.(cost);
    const nonce = request.nonce ?? (await ctx.client.getTransactionCount({ address: from.address, blockTag: 'pending' }));
    const serialized = await from.signTransaction({
      type: 'eip1559',
      chainId: ctx.chainId,
      nonce,
      gas: cost.gasLimit,
      to: request.to,
      ...(request.data === undefined ? {} : { data: request.data }),
      ...(request.value === undefined ? {} : { value: request.value }),
      ...fees,
    });
    return { txHash: keccak256(serialized), serialized, nonce };
  } catch (err) {
    // Some nodes already refuse a used nonce while estimating gas; same meaning as at broadcast.
    if (request.nonce !== undefined && isNonceTooLow(err)) throw new NonceAlreadyUsedError(from.address, request.nonce);
    throw err;
  }
}

/** Numbers each transfer among the earlier ones of its transaction to the same recipient (logs in order). */
function withOrdinals(transfers: Array<Omit<Transfer, 'ordinal'>>): Transfer[] {
  const seen = new Map<string, number>();
  return transfers.map((t) => {
    const key = `${t.txHash.toLowerCase()}:${t.token.toLowerCase()}:${t.to.toLowerCase()}`;
    const ordinal = seen.get(key) ?? 0;
    seen.set(key, ordinal + 1);
    return { ...t, ordinal };
  });
}

function decodeTransfer(chainId: number, log: TransactionReceipt['logs'][number]): Omit<Transfer, 'ordinal'> | undefined {
  if (log.topics.length !== 3) return undefined; // ERC-721 Transfer has the same signature, 4 topics
  try {
    const { eventName, args } = decodeEventLog({ abi: [TRANSFER_EVENT], data: log.data, topics: log.topics });
    if (eventName !== 'Transfer') return undefined;
    return {
      chainId,
      txHash: log.transactionHash,
      logIndex: log.logIndex,
      blockNumber: log.blockNumber,
      blockHash: log.blockHash,
      token: getAddress(log.address),
      from: getAddress(args.from),
      to: getAddress(args.to),
      amountAtomic: args.value,
    };
  } catch {
    return undefined;
  }
}

function isBelowBaseFee(err: unknown): boolean {
  return (
    err instanceof Error &&
    /less than (the )?block base fee|fee cap less than block base fee/i.test(
      err.message + String((err as { details?: unknown }).details ?? ''),
    )
  );
}

function isNonceTooLow(err: unknown): boolean {
  if (err instanceof BaseError && err.walk((e) => e instanceof NonceTooLowError)) return true;
  return err instanceof Error && /nonce too low|nonce has already been used/i.test(err.message);
}
