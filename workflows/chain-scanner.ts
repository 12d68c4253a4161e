import { continueAsNew, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import { wakeOn } from './wait';
import type { ChainScannerActivities } from '../activities/chain-scanner';

export interface ChainScannerInput {
  chainId: number;
  /** Next block to read; the cursor lives in the workflow, so a worker restart resumes where it was. */
  fromBlock: string;
  pollSeconds: number;
  /** Scans per run before continue-as-new keeps the history small. */
  scansPerRun?: number;
}

export const CHAIN_SCANNER_WORKFLOW = 'chainScannerWorkflow';
export const chainScannerWorkflowId = (chainId: number) => `chain-scanner:${chainId}`;
/** Wakes the scanner now (e.g. after a sandbox payment) instead of at the next poll. */
export const pokeSignal = defineSignal('poke');

const { scanTransfers } = proxyActivities<ChainScannerActivities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

/**
 * One durable scanner per network: reads ERC-20 Transfer logs range by range and hands each
 * transfer to its owner (a Payment's workflow). Rescans are harmless: owners count a transfer once.
 */
export async function chainScannerWorkflow(input: ChainScannerInput): Promise<void> {
  let poked = false;
  setHandler(pokeSignal, () => {
    poked = true;
  });
  let fromBlock = input.fromBlock;
  const scans = input.scansPerRun ?? 200;
  for (let i = 0; i < scans; i += 1) {
    // Reset before the scan: a poke that arrives while scanning means "look again", not "lost".
    poked = false;
    const result = await scanTransfers({ chainId: input.chainId, fromBlock });
    fromBlock = result.nextFromBlock;
    if (!result.caughtUp) continue; // more history to read: no pause
    await wakeOn(() => poked, input.pollSeconds * 1000);
  }
  await continueAsNew<typeof chainScannerWorkflow>({ ...input, fromBlock });
}
