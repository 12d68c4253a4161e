import { TransactionReceiptNotFoundError, createPublicClient, type Hash, type Hex, type PublicClient, type TransactionReceipt } from 'viem';
import { RPC_TIMEOUT_MS, rpcTransport } from './transport';

/**
 * Chain faults on an anvil node, for tests and the sandbox CLI: mining paused and resumed, several
 * transfers in one block, reorgs that really replace blocks, a transaction re-mined at another
 * position, a pending transaction dropped. Everything is anvil's own JSON-RPC (anvil 1.7.1:
 * evm_setAutomine, evm_setIntervalMining, anvil_mine, anvil_reorg, anvil_dropTransaction,
 * txpool_content); nothing here works against a real network.
 */

export interface BlockRef {
  number: bigint;
  hash: Hash;
}

export type MiningMode = { mode: 'automine' } | { mode: 'interval'; seconds: number } | { mode: 'paused' };

/** Where a mined transaction sits: its block and the log indexes of its logs. */
export interface TxPosition {
  txHash: Hash;
  blockNumber: bigint;
  blockHash: Hash;
  transactionIndex: number;
  logIndexes: number[];
}

/** A transaction to mine into a reorg's new blocks. */
export interface ReorgInclusion {
  /** A transaction the node knows (mined in a replaced block, typically): its signed bytes are re-used. */
  txHash?: Hash;
  /** Signed transaction bytes, e.g. a transfer signed for the occasion and never broadcast. */
  raw?: Hex;
  /** Which new block: 0 is the first replaced height. Defaults to 0. */
  block?: number;
}

export interface ReorgOptions {
  /** Mined into the new blocks in this order (per block). */
  include?: ReorgInclusion[];
  /**
   * Re-mine every transaction of the replaced blocks at its old block offset and order (after `include`
   * for the same block): the blocks still change hash, the transactions stay. Default: they are dropped.
   */
  reincludeAll?: boolean;
}

export interface ReorgResult {
  /** Each replaced height with its hash before and after: they always differ. */
  replaced: Array<{ number: bigint; oldHash: Hash; newHash: Hash }>;
  head: BlockRef;
  /** Transactions of the replaced blocks that are no longer on the chain (anvil forgets them). */
  dropped: Hash[];
  /** Transactions mined into the new blocks, in block order. */
  included: Hash[];
}

export interface RemineOptions {
  /**
   * How many blocks later than now it lands (0: the same height, in a new block). Default 0. The other
   * transactions of the replaced blocks are mined again at their heights, so moving a transaction behind
   * a later one of the same sender fails (nonce order).
   */
  blocksLater?: number;
  /**
   * Signed transactions mined just before it in its new block, so its transaction and log indexes move.
   * Sign them with gas to spare: they run against the state of the new block, not the one they were
   * estimated on.
   */
  precededBy?: Hex[];
}

export interface ChainFaults {
  readonly rpcUrl: string;
  head(): Promise<BlockRef>;
  miningMode(): Promise<MiningMode>;
  /** No blocks until resumed (or `mine`d); transactions wait in the mempool. */
  pauseMining(): Promise<void>;
  /** Automine (one block per transaction) without `intervalSeconds`, else a block every `intervalSeconds`. */
  resumeMining(opts?: { intervalSeconds?: number }): Promise<MiningMode>;
  setMiningMode(mode: MiningMode): Promise<void>;
  /** Mines `blocks` blocks now, whatever the mining mode; answers the new head. */
  mine(blocks?: number): Promise<BlockRef>;
  /** Runs fn with mining paused, then restores the mode it found (also when fn throws). */
  withMiningPaused<T>(fn: () => Promise<T>): Promise<T>;
  /** Pauses mining, runs `send` (which broadcasts and answers its hashes), mines them all in one block. */
  inOneBlock(send: () => Promise<Hash[]>): Promise<{ block: BlockRef; positions: TxPosition[] }>;
  /** Replaces the last `depth` blocks with new ones (the canonical chain changes; the height stays). */
  reorg(depth: number, opts?: ReorgOptions): Promise<ReorgResult>;
  /** Mines a mined transaction again, same hash, in a new block (and, with precededBy, at new log indexes). */
  remine(txHash: Hash, opts?: RemineOptions): Promise<{ before: TxPosition; after: TxPosition; reorg: ReorgResult }>;
  /** Removes a pending transaction from the mempool: the node no longer knows it. */
  dropTransaction(txHash: Hash): Promise<void>;
  pendingTransactions(): Promise<Hash[]>;
  position(txHash: Hash): Promise<TxPosition | null>;
  /**
   * A fee spike, as a busy hour on Ethereum: one block is mined at `baseFeeWei` at once, and every
   * block after it is held there until `release` (EIP-1559 would let it fall by an eighth per block
   * under target, so it is set again before each). `release` sets back the base fee it found and mines
   * a block at it. The first block drops nothing: anvil drops a pending transaction priced under a
   * block's base fee, where a real mempool keeps it (and its wallet would send it again), so what is
   * pending under the spike is mined first, at the fee it was priced for.
   */
  holdBaseFee(baseFeeWei: bigint): Promise<BaseFeeHold>;
}

export interface BaseFeeHold {
  readonly baseFeeWei: bigint;
  /** The base fee the hold found, and sets back. */
  readonly baselineWei: bigint;
  release(): Promise<void>;
}

/** How often a held base fee is set again; a block mined in between may fall by an eighth. */
const BASE_FEE_HOLD_EVERY_MS = 50;
const BASE_FEE_RESTORE_TRIES = 5;

export class ChainFaultError extends Error {
  override name = 'ChainFaultError';
}

export async function jsonRpc<T = unknown>(rpcUrl: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new ChainFaultError(`${method}: ${body.error.message}`);
  return body.result as T;
}

const quantity = (n: number | bigint) => `0x${n.toString(16)}`;

export function createChainFaults(rpcUrl: string): ChainFaults {
  // cacheTime 0: viem would otherwise answer a cached block number across a reorg.
  const client: PublicClient = createPublicClient({ transport: rpcTransport(rpcUrl), cacheTime: 0 });
  const rpc = <T>(method: string, params: unknown[] = []) => jsonRpc<T>(rpcUrl, method, params);

  async function head(): Promise<BlockRef> {
    const block = await client.getBlock({ blockTag: 'latest' });
    return { number: block.number, hash: block.hash };
  }

  async function receipt(txHash: Hash): Promise<TransactionReceipt | null> {
    try {
      return await client.getTransactionReceipt({ hash: txHash });
    } catch (err) {
      if (err instanceof TransactionReceiptNotFoundError) return null;
      throw err;
    }
  }

  async function position(txHash: Hash): Promise<TxPosition | null> {
    const r = await receipt(txHash);
    if (!r) return null;
    return {
      txHash,
      blockNumber: r.blockNumber,
      blockHash: r.blockHash,
      transactionIndex: r.transactionIndex,
      logIndexes: r.logs.map((l) => l.logIndex),
    };
  }

  async function miningMode(): Promise<MiningMode> {
    if (await rpc<boolean>('anvil_getAutomine')) return { mode: 'automine' };
    const interval = await rpc<number | null>('anvil_getIntervalMining');
    return interval ? { mode: 'interval', seconds: Number(interval) } : { mode: 'paused' };
  }

  async function setMiningMode(mode: MiningMode): Promise<void> {
    // Both switches, in this order: each call alone leaves the other mode as it was.
    await rpc('evm_setIntervalMining', [mode.mode === 'interval' ? mode.seconds : 0]);
    await rpc('evm_setAutomine', [mode.mode === 'automine']);
    const now = await miningMode();
    if (now.mode !== mode.mode) throw new ChainFaultError(`asked anvil for ${mode.mode} mining, it reports ${now.mode}`);
  }

  async function mine(blocks = 1): Promise<BlockRef> {
    if (!Number.isInteger(blocks) || blocks < 1) throw new ChainFaultError(`blocks must be a positive integer, got ${blocks}`);
    await rpc('anvil_mine', [quantity(blocks)]);
    return head();
  }

  async function withMiningPaused<T>(fn: () => Promise<T>): Promise<T> {
    const before = await miningMode();
    if (before.mode !== 'paused') await setMiningMode({ mode: 'paused' });
    try {
      return await fn();
    } finally {
      if (before.mode !== 'paused') await setMiningMode(before);
    }
  }

  async function rawOf(txHash: Hash): Promise<Hex> {
    const raw = await rpc<Hex | null>('eth_getRawTransactionByHash', [txHash]);
    if (!raw) throw new ChainFaultError(`the node does not know transaction ${txHash}`);
    return raw;
  }

  async function reorgNow(depth: number, opts: ReorgOptions): Promise<ReorgResult> {
    const top = await head();
    if (!Number.isInteger(depth) || depth < 1) throw new ChainFaultError(`depth must be a positive integer, got ${depth}`);
    if (BigInt(depth) > top.number) throw new ChainFaultError(`depth ${depth} reaches past genesis (head is ${top.number})`);
    const first = top.number - BigInt(depth) + 1n;
    const old = await Promise.all(Array.from({ length: depth }, (_, i) => client.getBlock({ blockNumber: first + BigInt(i) })));

    // [signed bytes, block offset] in mining order; anvil keeps this order within a block.
    const pairs: Array<{ raw: Hex; hash: Hash | undefined; block: number }> = [];
    for (const inc of opts.include ?? []) {
      const block = inc.block ?? 0;
      if (!Number.isInteger(block) || block < 0 || block >= depth)
        throw new ChainFaultError(`inclusion block ${block} is outside the ${depth} new blocks`);
      if (!inc.raw === !inc.txHash) throw new ChainFaultError('an inclusion names either txHash or raw');
      pairs.push({ raw: inc.raw ?? (await rawOf(inc.txHash!)), hash: inc.txHash, block });
    }
    const replacedTxs = old.flatMap((b, i) => b.transactions.map((hash) => ({ hash, block: i })));
    if (opts.reincludeAll) {
      const named = new Set(pairs.map((p) => p.hash));
      for (const t of replacedTxs) if (!named.has(t.hash)) pairs.push({ raw: await rawOf(t.hash), hash: t.hash, block: t.block });
    }
    // A stable sort by block keeps the caller's order inside each block.
    pairs.sort((a, b) => a.block - b.block);

    await rpc('anvil_reorg', [depth, pairs.map((p) => [p.raw, p.block])]);

    const replaced = await Promise.all(
      old.map(async (b) => ({ number: b.number, oldHash: b.hash, newHash: (await client.getBlock({ blockNumber: b.number })).hash })),
    );
    const unchanged = replaced.filter((r) => r.newHash === r.oldHash);
    if (unchanged.length > 0) throw new ChainFaultError(`anvil_reorg left block(s) ${unchanged.map((r) => r.number).join(', ')} unchanged`);
    const newBlocks = await Promise.all(replaced.map((r) => client.getBlock({ blockNumber: r.number })));
    const included = newBlocks.flatMap((b) => b.transactions);
    const stillThere = new Set(included);
    return {
      replaced,
      head: await head(),
      dropped: replacedTxs.map((t) => t.hash).filter((h) => !stillThere.has(h)),
      included,
    };
  }

  const faults: ChainFaults = {
    rpcUrl,
    holdBaseFee: (baseFeeWei) => holdBaseFee(baseFeeControls(client, rpc, { mine, withMiningPaused }), baseFeeWei),
    head,
    miningMode,
    pauseMining: () => setMiningMode({ mode: 'paused' }),
    async resumeMining(opts = {}) {
      const mode: MiningMode = opts.intervalSeconds ? { mode: 'interval', seconds: opts.intervalSeconds } : { mode: 'automine' };
      await setMiningMode(mode);
      return mode;
    },
    setMiningMode,
    mine,
    withMiningPaused,

    async inOneBlock(send) {
      return withMiningPaused(async () => {
        const hashes = await send();
        const pending = new Set(await faults.pendingTransactions());
        const missing = hashes.filter((h) => !pending.has(h.toLowerCase() as Hash));
        if (missing.length > 0) throw new ChainFaultError(`not in the mempool, so not minable together: ${missing.join(', ')}`);
        const block = await mine(1);
        const positions = await Promise.all(hashes.map(async (h) => (await position(h))!));
        const strays = positions.filter((p) => !p || p.blockHash !== block.hash);
        if (strays.length > 0) throw new ChainFaultError(`${strays.length} transaction(s) did not land in block ${block.number}`);
        return { block, positions };
      });
    },

    // Paused throughout, so no block lands between reading the replaced blocks and replacing them.
    reorg: (depth, opts = {}) => withMiningPaused(() => reorgNow(depth, opts)),

    remine(txHash, opts = {}) {
      return withMiningPaused(async () => {
        const before = await position(txHash);
        if (!before) throw new ChainFaultError(`transaction ${txHash} is not mined`);
        const later = opts.blocksLater ?? 0;
        let top = await head();
        const target = before.blockNumber + BigInt(later);
        if (target > top.number) top = await mine(Number(target - top.number));
        const depth = Number(top.number - before.blockNumber) + 1;
        const reorg = await reorgNow(depth, {
          include: [...(opts.precededBy ?? []).map((raw) => ({ raw, block: later })), { txHash, block: later }],
          reincludeAll: true,
        });
        const after = await position(txHash);
        if (!after || after.blockNumber !== target) throw new ChainFaultError(`transaction ${txHash} did not land at block ${target}`);
        return { before, after, reorg };
      });
    },

    async dropTransaction(txHash) {
      const pending = await faults.pendingTransactions();
      if (!pending.includes(txHash.toLowerCase() as Hash)) throw new ChainFaultError(`transaction ${txHash} is not pending`);
      await rpc('anvil_dropTransaction', [txHash]);
      if ((await faults.pendingTransactions()).includes(txHash.toLowerCase() as Hash)) {
        throw new ChainFaultError(`anvil kept transaction ${txHash} in its mempool`);
      }
    },

    async pendingTransactions() {
      return (await mempool(rpc)).map((tx) => tx.hash.toLowerCase() as Hash);
    },

    position,
  };
  return faults;
}

interface BaseFeeControls {
  latest(): Promise<bigint>;
  setNext(wei: bigint): Promise<unknown>;
  mine(): Promise<unknown>;
  /** The mempool's transactions whose fee cap is under `wei`: a block at that base fee would drop them. */
  pricedUnder(wei: bigint): Promise<Hash[]>;
  withMiningPaused<T>(fn: () => Promise<T>): Promise<T>;
}

type Rpc = <T>(method: string, params?: unknown[]) => Promise<T>;

interface PoolTransaction {
  hash: Hash;
  maxFeePerGas?: Hex | null;
  gasPrice?: Hex | null;
}

/** Every transaction in the mempool, pending or queued behind a nonce gap. */
async function mempool(rpc: Rpc): Promise<PoolTransaction[]> {
  type Pool = Record<string, Record<string, PoolTransaction>>;
  const content = await rpc<{ pending: Pool; queued: Pool }>('txpool_content');
  return [content.pending, content.queued].flatMap((pool) => Object.values(pool).flatMap((byNonce) => Object.values(byNonce)));
}

function baseFeeControls(client: PublicClient, rpc: Rpc, mining: Pick<ChainFaults, 'mine' | 'withMiningPaused'>): BaseFeeControls {
  return {
    async latest() {
      const block = await client.getBlock({ blockTag: 'latest' });
      if (block.baseFeePerGas === null) throw new ChainFaultError('the node has no base fee (not an EIP-1559 chain)');
      return block.baseFeePerGas;
    },
    setNext: (wei) => rpc('anvil_setNextBlockBaseFeePerGas', [quantity(wei)]),
    mine: () => mining.mine(1),
    async pricedUnder(wei) {
      return (await mempool(rpc)).filter((tx) => BigInt(tx.maxFeePerGas ?? tx.gasPrice ?? 0) < wei).map((tx) => tx.hash);
    },
    withMiningPaused: mining.withMiningPaused,
  };
}

/** Tries at mining what the spike would drop before it starts; more arrive only between two calls. */
const SPIKE_START_TRIES = 20;

/**
 * Mines the spike's first block once nothing pending is priced under it. With mining paused and the
 * next base fee already at the spike, the node refuses any new transaction it prices out, so the
 * mempool read is all a block at the spike could drop; what it holds is mined at the baseline first.
 */
async function startSpike(fees: BaseFeeControls, baseFeeWei: bigint, baselineWei: bigint): Promise<void> {
  await fees.withMiningPaused(async () => {
    for (let tries = 1; ; tries++) {
      await fees.setNext(baseFeeWei);
      const under = await fees.pricedUnder(baseFeeWei);
      if (under.length === 0) return void (await fees.mine());
      await fees.setNext(baselineWei);
      if (tries === SPIKE_START_TRIES) {
        throw new ChainFaultError(`${under.length} transaction(s) stay pending under the spike after ${tries} blocks: ${under.join(', ')}`);
      }
      await fees.mine();
    }
  });
}

async function holdBaseFee(fees: BaseFeeControls, baseFeeWei: bigint): Promise<BaseFeeHold> {
  if (baseFeeWei <= 0n) throw new ChainFaultError(`a held base fee must be positive, got ${baseFeeWei}`);
  const baselineWei = await fees.latest();
  await startSpike(fees, baseFeeWei, baselineWei);
  let held = true;
  // Setting the next block's base fee is idempotent: set it again on a short beat, whatever is mined.
  const beat = (async () => {
    while (held) {
      await new Promise((r) => setTimeout(r, BASE_FEE_HOLD_EVERY_MS));
      if (held) await fees.setNext(baseFeeWei).catch(() => undefined);
    }
  })();
  return {
    baseFeeWei,
    baselineWei,
    async release() {
      if (!held) return;
      held = false;
      await beat;
      // A block the node mines on its own between setting the fee and mining takes the set fee, and
      // ours then falls from it: mine again until the latest block carries the baseline.
      for (let tries = 1; ; tries++) {
        await fees.setNext(baselineWei);
        await fees.mine();
        const latest = await fees.latest();
        if (latest === baselineWei) return;
        if (tries === BASE_FEE_RESTORE_TRIES) {
          throw new ChainFaultError(`the base fee is ${latest} after ${tries} tries to set it back to ${baselineWei}`);
        }
      }
    },
  };
}
