/** The VaultFundingWorkflow's contract: its name, id and input. */
export const VAULT_FUNDING_WORKFLOW = 'vaultFundingWorkflow';

/** One workflow per funding operation, ever: its id is what makes the transfer happen once. */
export function vaultFundingWorkflowId(fundingOperationId: string): string {
  return `vault-funding:${fundingOperationId}`;
}

export interface VaultFundingWorkflowInput {
  fundingOperationId: string;
  /** The network's confirmation depth. */
  confirmations: number;
  /** How often the sent leg is re-read. */
  pollSeconds: number;
  /** Reads of a sent leg before it counts as unconfirmed (requires intervention). */
  maxChecks: number;
}

export interface VaultFundingWorkflowResult {
  status: 'confirmed' | 'failed' | 'requires_intervention';
}
