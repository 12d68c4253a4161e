import type { Address, Hash } from 'viem';
import type { ChainRegistry } from '../../chain/registry';
import type { Chain, Transfer } from '../../chain/types';

/** Answers true when it owned (and took) the transfer. */
export type TransferTaker = (transfer: Transfer) => Promise<boolean>;

/** A scanned block and its hash (the scanner keeps the last few; see findReorg). */
export interface BlockCheckpoint {
  number: string;
  hash: string;
}

export interface ScanResult {
  nextFromBlock: string;
  caughtUp: boolean;
  seen: number;
  /** The last block of this scan, to check next time that it is still canonical. */
  checkpoint?: BlockCheckpoint;
  /** The chain reorganised under blocks already scanned: read again from here (nothing was read now). */
  reorg?: { rescanFrom: string; replaced: number; deeperThanKnown: boolean };
}

export interface ScanDeps {
  chains: ChainRegistry;
  takers: TransferTaker[];
  batchBlocks?: number;
  /** Transfers from the service's own addresses are no payment or deposit. */
  isOurs?: (address: string) => Promise<boolean>;
  /** The takers that see those too: money the service returns into a vault is still the vault's receipt. */
  takersOfOurs?: TransferTaker[];
  /** Called after each transfer is handled: the activity heartbeats, so a dead worker is noticed soon. */
  progress?: () => void;
  /** Recipients whose transfers are handled at once (each recipient's in chain order). */
  concurrency?: number;
  /**
   * Of a range's recipients (lowercase), those the takers may own (ownedRecipients): the others'
   * transfers are someone else's and go to no taker. Absent: every transfer is offered to the takers.
   */
  owned?: (recipients: string[]) => Promise<Set<string>>;
  /**
   * Told every range read (after its last block was found still canonical): all its transfers, those
   * to our addresses (owned), its last block and that block's timestamp (seconds). A failure fails
   * the scan, which is retried.
   */
  read?: (range: { to: bigint; timestamp: bigint; transfers: Transfer[]; owned: Set<Transfer> }) => Promise<void>;
}

/**
 * One scan of a network. First, when checkpoints are given, the newest one must still be canonical;
 * if not, the chain reorganised and the answer is where to read again (the block after the newest
 * checkpoint that is still canonical). Otherwise: the ERC-20 Transfer logs of every configured asset in
 * the next block range (at most batchBlocks), each offered to its owners in turn (Payments, then
 * deposit addresses). Owners count a transfer once (by its identity, which a re-mined transfer
 * keeps), so a rescan is harmless.
 */
export async function scanRange(
  deps: ScanDeps,
  input: { chainId: number; fromBlock: string; checkpoints?: BlockCheckpoint[] },
): Promise<ScanResult> {
  const chain = deps.chains.get(input.chainId);
  const network = deps.chains.network(input.chainId);
  if (input.checkpoints?.length) {
    const reorg = await findReorg(chain, input.checkpoints);
    if (reorg) return { nextFromBlock: reorg.rescanFrom, caughtUp: false, seen: 0, reorg };
  }
  const head = await chain.getBlockNumber();
  const from = BigInt(input.fromBlock);
  if (from > head) return { nextFromBlock: input.fromBlock, caughtUp: true, seen: 0 };
  const last = from + BigInt(deps.batchBlocks ?? 500) - 1n;
  let to = head < last ? head : last;
  let before: Hash | null;
  let read: Transfer[];
  for (;;) {
    // The hash of the range's last block before and after reading it: if a reorg replaced it meanwhile,
    // the logs may be of either chain, so this scan is retried instead of trusted.
    before = await chain.getBlockHash(to);
    try {
      read = [];
      for (const asset of network.assets) {
        read.push(...(await chain.getTransfers({ token: asset.tokenAddress as Address, to: undefined, fromBlock: from, toBlock: to })));
      }
      break;
    } catch (err) {
      // A busy token's logs over many blocks can exceed what the node answers: read the first half.
      if (to === from || !isRangeTooLarge(err)) throw err;
      to = from + (to - from) / 2n;
    }
  }
  const transfers = await ownedOnly(read, deps.owned);
  let seen = 0;
  const take = async (transfer: Transfer) => {
    const ours = deps.isOurs !== undefined && (await deps.isOurs(transfer.from));
    for (const taker of ours ? (deps.takersOfOurs ?? []) : deps.takers) {
      if (await taker(transfer)) {
        seen += 1;
        return;
      }
    }
  };
  // A busy block range must not take longer than the chain makes blocks: recipients are independent,
  // but one recipient's transfers keep their chain order (a Payment's roles depend on it).
  await forEachRecipient(transfers, deps.concurrency ?? 8, async (t) => {
    await take(t);
    deps.progress?.();
  });
  const after = await chain.getBlockHeader(to);
  if (!before || before !== after?.hash) throw new Error(`block ${to} changed while it was scanned (a reorg): scanning it again`);
  await deps.read?.({ to, timestamp: after.timestamp, transfers: read, owned: new Set(transfers) });
  return { nextFromBlock: (to + 1n).toString(), caughtUp: to === head, seen, checkpoint: { number: to.toString(), hash: before } };
}

/**
 * Whether a log query failed for its size: the response over the client's limit (viem's
 * ResponseBodyTooLargeError), or a provider's refusal of too many results or too wide a range.
 */
export function isRangeTooLarge(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    if (e.name === 'ResponseBodyTooLargeError') return true;
    if (
      /more than \d+ (results|logs)|response (size|body) (exceeded|too large)|block range|range (is )?too (large|wide)|too many (results|logs)|limit exceeded/i.test(
        e.message,
      )
    )
      return true;
  }
  return false;
}

/** The transfers to recipients `owned` names (after the logs were read: see ownedRecipients), or all without it. */
async function ownedOnly(transfers: Transfer[], owned: ScanDeps['owned']): Promise<Transfer[]> {
  if (!owned || transfers.length === 0) return transfers;
  const ours = await owned([...new Set(transfers.map((t) => t.to.toLowerCase()))]);
  return transfers.filter((t) => ours.has(t.to.toLowerCase()));
}

/** Runs fn over every transfer: up to `concurrency` recipients at a time, each recipient's in order. */
async function forEachRecipient(transfers: Transfer[], concurrency: number, fn: (t: Transfer) => Promise<void>): Promise<void> {
  const byRecipient = new Map<string, Transfer[]>();
  for (const t of transfers) {
    const key = t.to.toLowerCase();
    byRecipient.set(key, [...(byRecipient.get(key) ?? []), t]);
  }
  const queues = [...byRecipient.values()].map((q) =>
    q.sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1)),
  );
  const lanes = Array.from({ length: Math.min(concurrency, queues.length) }, async () => {
    for (let q = queues.shift(); q; q = queues.shift()) {
      for (const t of q) await fn(t);
    }
  });
  await Promise.all(lanes);
}

/**
 * Compares the checkpoints (oldest first) with the chain, newest first. All canonical: no reorg.
 * Otherwise the rescan starts after the newest checkpoint still canonical, or, when none is, at the
 * oldest one (a reorg deeper than the scanner remembers, reported as such).
 */
export async function findReorg(
  chain: Pick<Chain, 'getBlockHash'>,
  checkpoints: BlockCheckpoint[],
): Promise<{ rescanFrom: string; replaced: number; deeperThanKnown: boolean } | null> {
  const newest = checkpoints[checkpoints.length - 1]!;
  if ((await chain.getBlockHash(BigInt(newest.number))) === (newest.hash as Hash)) return null;
  for (let i = checkpoints.length - 2; i >= 0; i -= 1) {
    const c = checkpoints[i]!;
    if ((await chain.getBlockHash(BigInt(c.number))) === (c.hash as Hash)) {
      return { rescanFrom: (BigInt(c.number) + 1n).toString(), replaced: checkpoints.length - 1 - i, deeperThanKnown: false };
    }
  }
  return { rescanFrom: checkpoints[0]!.number, replaced: checkpoints.length, deeperThanKnown: true };
}
