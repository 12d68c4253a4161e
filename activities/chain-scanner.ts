import { Context } from '@temporalio/activity';
import type { PrismaClient } from '../src/db/client';
import type { ChainRegistry } from '../src/chain/registry';
import { scanRange, type BlockCheckpoint, type TransferTaker } from '../src/domain/chain-scan';
import { takeDepositTransfer } from '../src/domain/deposits/deposit-intake';
import type { DepositEngine, PaymentEngine } from '../src/domain/engine';
import { takePaymentTransfer } from '../src/domain/payments/payment-intake';
import { isServiceControlled } from '../src/domain/custody-addresses';
import type { Custody } from '../src/custody';

export interface ChainScannerDeps {
  prisma: PrismaClient;
  chains: ChainRegistry;
  custody: Pick<Custody, 'deriveAddress'>;
  engine: Pick<PaymentEngine, 'transferSeen'> & Pick<DepositEngine, 'startDeposit'>;
  /** Blocks per scan; bounds one activity's work. */
  batchBlocks?: number;
}

/** The chain scanner's one side effect: a scan of the next block range, each transfer handed to its owner. */
export function createChainScannerActivities(deps: ChainScannerDeps) {
  const takers: TransferTaker[] = [(t) => takePaymentTransfer(deps, t), (t) => takeDepositTransfer(deps, t)];
  return {
    scanTransfers: (input: { chainId: number; fromBlock: string; checkpoints?: BlockCheckpoint[] }) =>
      scanRange(
        {
          chains: deps.chains,
          takers,
          batchBlocks: deps.batchBlocks,
          isOurs: (a) => isServiceControlled(deps.prisma, deps.custody, a),
          progress: () => Context.current().heartbeat(),
        },
        input,
      ),
  };
}

export type ChainScannerActivities = ReturnType<typeof createChainScannerActivities>;
