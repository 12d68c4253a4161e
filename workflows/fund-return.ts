import { ApplicationFailure, condition, proxyActivities, setHandler, sleep } from '@temporalio/workflow';
import type { FundReturnActivities } from '../activities/fund-returns';
import type { ResolutionRequest } from '../src/domain/operators/pure/operator-resolution';
import { resolveFundReturnSignal, type FundReturnWorkflowInput, type FundReturnWorkflowResult } from './contracts/fund-return';
import { BOUNDED, UNTIL_DONE } from './retry-profiles';
import { isSettlementRefusal } from './contracts/settlement';
import { sendUnderFeeCap } from './fee-cap';

const untilDone = proxyActivities<FundReturnActivities>({ ...UNTIL_DONE, startToCloseTimeout: '30s' });
// The send is idempotent (the leg is recorded before broadcast), so a few tries are safe; a refusal is not retried.
const bounded = proxyActivities<FundReturnActivities>(BOUNDED);

/**
 * One refund or incident recovery (workflow id fund-return:<id>): send it through the settlement
 * sender, then follow it to the confirmation depth, where it is confirmed and posted. Refused or out of
 * tries with nothing sent: failed. Reverted or never confirmed: requires_intervention (never resent
 * automatically), until an operator's resolution: retry sends it again, mark-settled records the
 * payout they made by hand, fail ends it.
 */
export async function fundReturnWorkflow(input: FundReturnWorkflowInput): Promise<FundReturnWorkflowResult> {
  const resolutions: ResolutionRequest[] = [];
  setHandler(resolveFundReturnSignal, (request) => void resolutions.push(request));
  let status = await sendAndFollow(input);
  while (status === 'requires_intervention') {
    await condition(() => resolutions.length > 0);
    const resolved = await untilDone.resolveFundReturn({
      returnId: input.returnId,
      confirmations: input.confirmations,
      ...resolutions.shift()!,
    });
    // retry: pending again, so it is sent again (a live leg re-sent byte for byte, a reverted one signed anew).
    status = resolved.status === 'pending' ? await sendAndFollow(input) : (resolved.status as FundReturnWorkflowResult['status']);
  }
  return { status };
}

async function sendAndFollow(input: FundReturnWorkflowInput): Promise<FundReturnWorkflowResult['status']> {
  const { returnId } = input;
  try {
    await sendUnderFeeCap(() => bounded.sendFundReturn({ returnId }));
  } catch (err) {
    const cause = err instanceof ApplicationFailure ? err : (err as { cause?: unknown }).cause;
    const refusal = cause instanceof ApplicationFailure && isSettlementRefusal(cause.type) ? cause.details?.[0] : undefined;
    const state = await untilDone.failFundReturn({ returnId, reason: typeof refusal === 'string' ? refusal : 'send_failed' });
    return state.status === 'failed' ? 'failed' : 'requires_intervention';
  }
  for (let check = 0; check < input.maxChecks; check += 1) {
    const state = await untilDone.checkFundReturn({ returnId, confirmations: input.confirmations });
    if (state.status === 'confirmed' || state.status === 'requires_intervention' || state.status === 'failed') return state.status;
    await sleep(input.pollSeconds * 1000);
  }
  await untilDone.failFundReturn({ returnId, reason: 'transfer_unconfirmed' });
  return 'requires_intervention';
}
