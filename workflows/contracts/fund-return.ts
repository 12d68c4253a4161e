import { defineSignal } from '@temporalio/workflow';
import type { ResolutionRequest } from '../../src/domain/operators/pure/operator-resolution';

/** The FundReturnWorkflow's contract: its name, id and input. */
export const FUND_RETURN_WORKFLOW = 'fundReturnWorkflow';

/** One workflow per refund or recovery, ever: its id is what makes the transfer happen once. */
export function fundReturnWorkflowId(returnId: string): string {
  return `fund-return:${returnId}`;
}

export interface FundReturnWorkflowInput {
  returnId: string;
  /** The network's confirmation depth. */
  confirmations: number;
  /** How often the sent leg is re-read. */
  pollSeconds: number;
  /** Reads of a sent leg before it counts as unconfirmed (requires intervention). */
  maxChecks: number;
}

export interface FundReturnWorkflowResult {
  status: 'confirmed' | 'failed' | 'requires_intervention';
}

/** An operator's release of a requires_intervention return (retry, mark-settled with its tx hash, fail). */
export const resolveFundReturnSignal = defineSignal<[ResolutionRequest]>('resolveFundReturn');
