import { Context } from '@temporalio/activity';
import type { PrismaClient } from '../src/db/client';
import type { ChainRegistry } from '../src/chain/registry';
import { scanRange, type BlockCheckpoint, type TransferTaker } from '../src/domain/chain/chain-scan';
import { takeDepositTransfer } from '../src/domain/deposits/deposit-intake';
import type { ChainAdvanceEngine, DepositEngine, PaymentEngine } from '../src/domain/engine/pure/engine';
import { notifyChainAdvanced } from '../src/domain/chain/chain-waiters';
import { takePaymentTransfer } from '../src/domain/payments/payment-intake';
import { isServiceSender } from '../src/domain/chain/custody-addresses';
import { takeVaultTransfer } from '../src/domain/vaults/vault-receipts';
import { recordScanCursor } from '../src/domain/chain/chain-scan-cursors';
import { forgetInclusionsFrom, recordInclusions } from '../src/domain/chain/chain-inclusions';
import { ownedRecipients } from '../src/domain/chain/our-addresses';
import type { Custody } from '../src/custody';

export interface ChainScannerDeps {
  prisma: PrismaClient;
  chains: ChainRegistry;
  custody: Pick<Custody, 'deriveAddress'>;
  engine: Pick<PaymentEngine, 'transferSeen'> & Pick<DepositEngine, 'startDeposit'> & ChainAdvanceEngine;
  /** Blocks per scan; bounds one activity's work. */
  batchBlocks?: number;
}

/** How often a wait for the next block reads the head (a long poll: it answers as soon as one comes). */
const HEAD_POLL_MS = 100;

/**
 * The chain scanner's side effects: a scan of the next block range, each transfer handed to its owner
 * (and every workflow waiting on the chain told it advanced), and the wait for a new block.
 */
export function createChainScannerActivities(deps: ChainScannerDeps) {
  const vaultTaker: TransferTaker = (t) => takeVaultTransfer(deps, t);
  const takers: TransferTaker[] = [(t) => takePaymentTransfer(deps, t), (t) => takeDepositTransfer(deps, t), vaultTaker];
  return {
    async scanTransfers(input: { chainId: number; fromBlock: string; checkpoints: BlockCheckpoint[] }) {
      let headAt: Date | undefined;
      const result = await scanRange(
        {
          chains: deps.chains,
          takers,
          batchBlocks: deps.batchBlocks,
          isOurs: (a) => isServiceSender(deps.prisma, deps.custody, a),
          // One lookup per range: a transfer to none of our addresses costs no query of its own.
          owned: (recipients) => ownedRecipients(deps.prisma, recipients),
          // A vault's late funding returned to it from the escrow (vault-returns.ts) is its receipt.
          takersOfOurs: [vaultTaker],
          progress: () => Context.current().heartbeat(),
          // Live finality: where our transactions are mined, and when the range's last block was.
          read: async (range) => {
            await recordInclusions(deps.prisma, input.chainId, range);
            headAt = new Date(Number(range.timestamp) * 1000);
          },
        },
        input,
      );
      // A reorg: what was read from the rescan's first block on is forgotten until read again.
      if (result.reorg) await forgetInclusionsFrom(deps.prisma, input.chainId, BigInt(result.reorg.rescanFrom));
      // Where the scanner is now: every transfer through it has been handed over, which is all a
      // Payment's expiry waits for (chainReadThrough), and the lag /metrics reports. Before the
      // waiters' fan-out, so a busy fan-out never holds an expiry back; the workflow keeps its own cursor.
      await recordScanCursor(
        deps.prisma,
        input.chainId,
        result.nextFromBlock,
        result.reorg ? { at: null } : headAt ? { at: headAt } : undefined,
      );
      // New blocks read: what waits on a confirmation may have one now (after the transfers were handed over).
      if (result.checkpoint)
        await notifyChainAdvanced(deps, input.chainId, BigInt(result.checkpoint.number), () => Context.current().heartbeat());
      return result;
    },

    /**
     * Answers the head as soon as it passes afterBlock, or null after maxWaitMs. Heartbeats while it
     * waits, so a cancel (the scanner was poked) or a dead worker is noticed within a poll.
     */
    async awaitNewBlock(input: { chainId: number; afterBlock: string; maxWaitMs: number }): Promise<{ head: string | null }> {
      const chain = deps.chains.get(input.chainId);
      const ctx = Context.current();
      const until = Date.now() + input.maxWaitMs;
      for (;;) {
        const head = await chain.getBlockNumber();
        if (head > BigInt(input.afterBlock)) return { head: head.toString() };
        if (Date.now() >= until) return { head: null };
        ctx.heartbeat();
        await ctx.sleep(HEAD_POLL_MS);
      }
    },
  };
}

export type ChainScannerActivities = ReturnType<typeof createChainScannerActivities>;
