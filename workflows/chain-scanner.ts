import { condition, continueAsNew, proxyActivities, setHandler } from '@temporalio/workflow';
import type { ChainScannerActivities } from '../activities/chain-scanner';
import { pokeSignal, rescanFromSignal, type BlockCheckpoint, type ChainScannerInput } from './contracts/chain-scanner';
import { UNTIL_DONE_HEARTBEATING } from './retry-profiles';
import { runIsLong, wakeOn } from './wait';

// A scan of a busy range heartbeats: a slow but live one is not cut off and redone from its first block.
const heartbeating = proxyActivities<ChainScannerActivities>(UNTIL_DONE_HEARTBEATING);

/** Blocks remembered to notice a reorg (at the head a scan reads a block or two, so about as deep). */
const MAX_CHECKPOINTS = 64;

/** The longest wait for a block in one activity (well under its 10-minute start-to-close timeout). */
const MAX_BLOCK_WAIT_MS = 5 * 60_000;

/**
 * One durable scanner per network: reads ERC-20 Transfer logs range by range and hands each
 * transfer to its owner (a Payment's or a deposit's workflow). Rescans are harmless: owners count a
 * transfer once. It remembers the last blocks it read; when one of them is no longer canonical (a
 * reorg), it reads again from the newest block that still is, so re-mined transfers are seen.
 * Caught up, it waits for the next block (a long poll) and, having read new blocks, tells every
 * Payment and deposit with something in flight, so confirmations wait on blocks, not on timers.
 */
export async function chainScannerWorkflow(input: ChainScannerInput): Promise<void> {
  let poked = false;
  let rescanFrom: string | null = null;
  setHandler(pokeSignal, () => {
    poked = true;
  });
  setHandler(rescanFromSignal, (block) => {
    rescanFrom = block;
    poked = true;
  });
  let fromBlock = input.fromBlock;
  const scans = input.scansPerRun ?? 200;
  // The next block, a poke, or maxWaitMs (an empty chain: the scan then finds nothing, as a poll did).
  // A poke does not cancel the wait (cancelling an activity as it completes fails the workflow task
  // on the server: ACTIVITY_UNKNOWN): the scan runs, and the next wait takes over the one in flight,
  // which answers at the next block all the same.
  let waiting: Promise<void> | null = null;
  let waited = false;
  const nextBlockOrPoke = async (afterBlock: string) => {
    if (!waiting) {
      waited = false;
      const maxWaitMs = Math.min(input.pollSeconds * 5000, MAX_BLOCK_WAIT_MS);
      waiting = heartbeating.awaitNewBlock({ chainId: input.chainId, afterBlock, maxWaitMs }).then(
        () => void (waited = true),
        () => void (waited = true),
      );
    }
    await condition(() => waited || poked);
    if (waited) waiting = null;
  };
  let checkpoints: BlockCheckpoint[] = input.checkpoints ?? [];
  // Runs end by history size too: a worker without this run cached replays all of it on every poke.
  for (let i = 0; i < scans && !runIsLong(); i += 1) {
    // Reset before the scan: a poke that arrives while scanning means "look again", not "lost".
    poked = false;
    if (rescanFrom !== null) {
      fromBlock = rescanFrom;
      rescanFrom = null;
      checkpoints = checkpoints.filter((c) => BigInt(c.number) < BigInt(fromBlock));
    }
    const result = await heartbeating.scanTransfers({ chainId: input.chainId, fromBlock, checkpoints });
    if (result.reorg) {
      checkpoints = checkpoints.filter((c) => BigInt(c.number) < BigInt(result.reorg!.rescanFrom));
    } else if (result.checkpoint) {
      checkpoints = [...checkpoints, result.checkpoint].slice(-MAX_CHECKPOINTS);
    }
    fromBlock = result.nextFromBlock;
    if (!result.caughtUp) continue; // more history to read: no pause
    if (input.waitForBlocks !== false) await nextBlockOrPoke((BigInt(result.nextFromBlock) - 1n).toString());
    else await wakeOn(() => poked, input.pollSeconds * 1000);
  }
  // A rescan asked for in the last wait carries over into the next run.
  await continueAsNew<typeof chainScannerWorkflow>({ ...input, fromBlock: (rescanFrom as string | null) ?? fromBlock, checkpoints });
}
