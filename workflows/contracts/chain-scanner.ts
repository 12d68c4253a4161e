import { defineSignal } from '@temporalio/workflow';

/** The ChainScannerWorkflow's contract: one durable scanner per network. */
export const CHAIN_SCANNER_WORKFLOW = 'chainScannerWorkflow';

export function chainScannerWorkflowId(chainId: number): string {
  return `chain-scanner:${chainId}`;
}

export interface ChainScannerInput {
  chainId: number;
  /** Next block to read; the cursor lives in the workflow, so a worker restart resumes where it was. */
  fromBlock: string;
  pollSeconds: number;
  /**
   * Caught up, wait for the next block in a long-poll activity (the default) or sleep pollSeconds.
   * The time-skipping test server can't skip time while an activity runs, so its harness sleeps.
   */
  waitForBlocks?: boolean;
  /** Scans per run before continue-as-new keeps the history small. */
  scansPerRun?: number;
  /** The last blocks scanned, carried across continue-as-new: how the scanner notices a reorg. */
  checkpoints?: BlockCheckpoint[];
}

/** A scanned block and its hash: if that height later holds another hash, the chain reorganised. */
export interface BlockCheckpoint {
  number: string;
  hash: string;
}

/** Wakes the scanner now (e.g. after a sandbox payment) instead of at the next poll. */
export const pokeSignal = defineSignal('poke');

/** Reads again from this block on (an operator's or a test's rescan): owners count a transfer once. */
export const rescanFromSignal = defineSignal<[string]>('rescanFrom');
