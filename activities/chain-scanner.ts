import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Address } from 'viem';
import type { PrismaClient } from '../src/db/client';
import type { ChainRegistry } from '../src/chain/registry';
import type { Transfer } from '../src/chain/types';
import { newId } from '../src/domain/ids';
import { onTransferDetected, initialState, type PaymentStatus } from '../src/domain/payments/payment-machine';
import { transferDetectedSignal } from '../workflows/payment-api';
import { persistTransition, transferKey } from './payments';

export interface ChainScannerDeps {
  prisma: PrismaClient;
  chains: ChainRegistry;
  temporal: Client;
  /** Blocks per scan; bounds one activity's work. */
  batchBlocks?: number;
  /** Other owners of watched addresses (deposit addresses), tried in order after Payments. */
  transferHandlers?: TransferHandler[];
}

/** Returns true when it owned (and handled) the transfer. */
export type TransferHandler = (transfer: Transfer) => Promise<boolean>;

export function createChainScannerActivities(deps: ChainScannerDeps) {
  const { prisma, chains, temporal } = deps;

  /** A transfer to a Payment's escrow: recorded once, then handed to the Payment's workflow. */
  async function toPayment(transfer: Transfer): Promise<boolean> {
    const payment = await prisma.payment.findUnique({ where: { escrowAddress: transfer.to.toLowerCase() } });
    if (!payment) return false;
    const key = transferKey(transfer.chainId, transfer.txHash, transfer.logIndex);
    const { count: inserted } = await prisma.paymentTransfer.createMany({
      data: [
        {
          id: newId('paymentTransfer'),
          paymentId: payment.id,
          chainId: transfer.chainId,
          txHash: transfer.txHash.toLowerCase(),
          logIndex: transfer.logIndex,
          blockNumber: transfer.blockNumber,
          fromAddress: transfer.from.toLowerCase(),
          amountAtomic: transfer.amountAtomic.toString(),
          status: 'pending',
        },
      ],
      skipDuplicates: true,
    });
    if (inserted === 0) {
      // Seen before (a rescan, a retried scan): once its Payment has recorded an outcome, it is done.
      const row = await prisma.paymentTransfer.findFirst({
        where: { chainId: transfer.chainId, txHash: transfer.txHash.toLowerCase(), logIndex: transfer.logIndex },
        select: { status: true },
      });
      if (row && row.status !== 'pending') return true;
    }
    try {
      await temporal.workflow.getHandle(payment.id).signal(transferDetectedSignal, {
        key,
        txHash: transfer.txHash,
        logIndex: transfer.logIndex,
        amountAtomic: transfer.amountAtomic.toString(),
      });
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      await recordAfterClose(payment.id, key, transfer.amountAtomic);
    }
    return true;
  }

  /**
   * The Payment's workflow has finished: the same machine rule decides (late or duplicate), and the
   * transfer is recorded for recovery. Idempotent: incident and event ids derive from the transfer.
   */
  async function recordAfterClose(paymentId: string, key: string, amountAtomic: bigint) {
    await prisma.$transaction(async (tx) => {
      const p = await tx.payment.findUniqueOrThrow({ where: { id: paymentId } });
      const state = { ...initialState('receive', 0n), status: p.status as PaymentStatus, statusVersion: p.statusVersion };
      const t = onTransferDetected(state, { key, amountAtomic });
      if (!t) return;
      await persistTransition(tx, paymentId, {
        fromStatusVersion: p.statusVersion,
        statusVersion: p.statusVersion,
        status: p.status,
        stage: p.stage,
        operationalState: p.operationalState,
        operationalReasonCode: p.operationalReasonCode,
        confirmedAtomic: p.receivedAtomic.toString(),
        settlementTxHash: p.settlementTxHash,
        events: t.events,
        stamps: {},
        incidents: t.incidents.map((i) => ({ kind: i.kind, amountAtomic: i.amountAtomic.toString(), transferKey: i.transferKey })),
        transferStatuses: [{ key, status: 'confirmed', role: t.state.transfers[0]?.role }],
        ledger: [],
        cancel: null,
        failure: null,
        at: `after-close:${key}`,
      });
    });
  }

  const handlers: TransferHandler[] = [toPayment, ...(deps.transferHandlers ?? [])];

  return {
    async scanTransfers(input: { chainId: number; fromBlock: string }): Promise<{ nextFromBlock: string; caughtUp: boolean; seen: number }> {
      const chain = chains.get(input.chainId);
      const network = chains.network(input.chainId);
      const head = await chain.getBlockNumber();
      const from = BigInt(input.fromBlock);
      if (from > head) return { nextFromBlock: input.fromBlock, caughtUp: true, seen: 0 };
      const to = head < from + BigInt(deps.batchBlocks ?? 500) - 1n ? head : from + BigInt(deps.batchBlocks ?? 500) - 1n;
      let seen = 0;
      for (const asset of network.assets) {
        const transfers = await chain.getTransfers({ token: asset.tokenAddress as Address, to: undefined, fromBlock: from, toBlock: to });
        for (const transfer of transfers) {
          for (const handler of handlers) {
            if (await handler(transfer)) {
              seen += 1;
              break;
            }
          }
        }
      }
      return { nextFromBlock: (to + 1n).toString(), caughtUp: to === head, seen };
    },
  };
}

export type ChainScannerActivities = ReturnType<typeof createChainScannerActivities>;
