import { ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { VaultActivities } from '../activities/vaults';
import type { VaultFundingWorkflowInput, VaultFundingWorkflowResult } from './contracts/vault-funding';
import { BOUNDED, UNTIL_DONE } from './retry-profiles';
import { isSettlementRefusal } from './contracts/settlement';
import { sendUnderFeeCap } from './fee-cap';

const untilDone = proxyActivities<VaultActivities>({ ...UNTIL_DONE, startToCloseTimeout: '30s' });
// The send is idempotent (the leg is recorded before broadcast), so a few tries are safe; a refusal is not retried.
const bounded = proxyActivities<VaultActivities>(BOUNDED);

/**
 * The vault-to-escrow leg of one authorized funding operation (workflow id vault-funding:<id>): send it
 * through the settlement sender, then follow it to the confirmation depth. Confirmed: vault.funding_posted.
 * Refused, reverted, out of tries or never confirmed: vault.funding_requires_intervention. The Payment
 * itself is not told anything: it sees the transfer arrive at its escrow and verifies it as any other.
 */
export async function vaultFundingWorkflow(input: VaultFundingWorkflowInput): Promise<VaultFundingWorkflowResult> {
  const { fundingOperationId } = input;
  try {
    await sendUnderFeeCap(() => bounded.sendVaultFunding({ fundingOperationId }));
  } catch (err) {
    const cause = err instanceof ApplicationFailure ? err : (err as { cause?: unknown }).cause;
    // A refusal names its reason (settlement_destination_not_allowed, ledger_difference...); anything else ran out of tries.
    const refusal = cause instanceof ApplicationFailure && isSettlementRefusal(cause.type) ? cause.details?.[0] : undefined;
    const reason = typeof refusal === 'string' ? refusal : 'send_failed';
    const op = await untilDone.failVaultFunding({ fundingOperationId, reason });
    return { status: op.status === 'failed' ? 'failed' : 'requires_intervention' };
  }
  for (let check = 0; check < input.maxChecks; check += 1) {
    const op = await untilDone.checkVaultFunding({ fundingOperationId, confirmations: input.confirmations });
    if (op.status === 'confirmed') return { status: 'confirmed' };
    // Reverted: the check failed the operation (the leg is dead) and emitted requires_intervention.
    if (op.status === 'failed') return { status: 'failed' };
    await sleep(input.pollSeconds * 1000);
  }
  await untilDone.failVaultFunding({ fundingOperationId, reason: 'transfer_unconfirmed' });
  return { status: 'requires_intervention' };
}
