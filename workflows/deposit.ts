import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  continueAsNew,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { DepositActivities } from '../activities/deposits';
import {
  detect,
  isTerminal,
  onConfirming,
  onOperatorResolution,
  onSettlementAttemptFailed,
  onSettlementBroadcast,
  onSettlementConfirmed,
  onSettlementTrouble,
  onSourceChecked,
  type DepositState,
  type Transition,
  type TroubleReason,
} from '../src/domain/deposits/deposit-machine';
import { toOperatorAction } from '../src/domain/operator-resolution';
import { fromPersistedState, toPersistedState, toPersistedTransition } from '../src/domain/deposits/deposit-serde';
import {
  DEPOSIT_SETTLEMENT_REFUSED,
  resolveDepositSignal,
  type DepositResolutionRequest,
  type DepositWorkflowInput,
} from './deposit-api';

const SLOW_AFTER_CHECKS = 300;
const SLOW_POLL_MS = 30_000;

const db = proxyActivities<DepositActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});
// One settlement attempt per call: the workflow owns the retry budget, so the partner can see it.
const settlement = proxyActivities<DepositActivities>({
  startToCloseTimeout: '2m',
  retry: { maximumAttempts: 1 },
});

/**
 * One inbound transfer's whole lifecycle (workflow id = depositWorkflowId(chainId, txHash, logIndex)).
 * A thin loop: the pure deposit machine decides, activities persist each transition with its events
 * and ledger postings. The stored deposit is the state, so a continue-as-new (or a rerun after a
 * failed run) resumes from the database.
 */
export async function depositWorkflow(input: DepositWorkflowInput): Promise<{ status: string; statusVersion: number }> {
  const queue: DepositResolutionRequest[] = [];
  setHandler(resolveDepositSignal, (request) => void queue.push(request));

  const nowIso = () => new Date(Date.now()).toISOString();
  const initial = detect({
    amountAtomic: BigInt(input.amountAtomic),
    minimum: { amountAtomic: BigInt(input.minimumDeposit.amountAtomic), inclusive: input.minimumDeposit.inclusive },
    platformFeeBps: input.fees.platformFeeBps,
    partnerFeeBps: input.fees.partnerFeeBps,
    assetAccepted: input.assetAccepted,
  });
  // Idempotent: answers the stored deposit when an earlier run already recorded it.
  let state: DepositState = fromPersistedState(
    await db.recordDepositDetected(input, { state: toPersistedState(initial.state), events: initial.events, at: nowIso() }),
  );

  const apply = async (t: Transition | null) => {
    if (!t) return;
    await db.persistDepositTransition(input.depositId, toPersistedTransition(t, nowIso()));
    state = t.state;
  };
  const pollMs = input.policy.confirmationPollSeconds * 1000;
  let sourceChecks = 0;

  async function resolve(request: DepositResolutionRequest): Promise<void> {
    const resolved = onOperatorResolution(state, toOperatorAction(request), nowIso());
    if (!resolved) return; // not held: a stray or repeated resolution changes nothing
    await db.recordDepositResolution({
      id: `${input.depositId}:resolution:${state.statusVersion}`,
      depositId: input.depositId,
      action: request.action,
      txHash: request.txHash,
      reason: request.reason,
      actor: request.actor,
    });
    await apply(resolved.transition);
  }

  async function settle(): Promise<void> {
    let txHash: string;
    try {
      ({ txHash } = await settlement.broadcastDepositSettlement({ depositId: input.depositId }));
    } catch (err) {
      const cause = err instanceof ActivityFailure ? err.cause : undefined;
      if (cause instanceof ApplicationFailure && cause.type === DEPOSIT_SETTLEMENT_REFUSED) {
        // Nowhere to pay it: retrying can't help, an operator must look.
        await apply(onSettlementTrouble(state, (cause.details?.[0] as TroubleReason | undefined) ?? 'settlement_destination_missing'));
        return;
      }
      await apply(onSettlementAttemptFailed(state, { maxAttempts: input.policy.maxAttempts }));
      if (state.status === 'settling') {
        await sleep(input.policy.retryBackoffSeconds * 1000 * 2 ** (state.settlementAttempts - 1));
      }
      return;
    }
    await apply(onSettlementBroadcast(state, txHash));
    for (let check = 0; check < input.policy.maxConfirmationChecks; check += 1) {
      const status = await db.checkDepositSettlement({ depositId: input.depositId, confirmations: input.confirmations });
      if (status === 'confirmed') return apply(onSettlementConfirmed(state, txHash, nowIso()));
      if (status === 'reverted') return apply(onSettlementTrouble(state, 'settlement_failed'));
      await sleep(pollMs);
    }
    // Broadcast but never confirmed: it may still land, so nothing is resent automatically.
    await apply(onSettlementTrouble(state, 'settlement_unconfirmed'));
  }

  while (!isTerminal(state)) {
    // Resolutions only mean something while held; any others are dropped here.
    while (queue.length > 0 && state.status !== 'requires_intervention') queue.shift();
    // The stored deposit is the state: a new run resumes from it (never with a resolution still queued).
    if (workflowInfo().continueAsNewSuggested && queue.length === 0) await continueAsNew<typeof depositWorkflow>(input);

    if (state.status === 'detected') {
      await apply(onConfirming(state));
    } else if (state.status === 'confirming') {
      const outcome = await db.verifyDepositSource({
        chainId: input.chainId,
        txHash: input.txHash,
        logIndex: input.logIndex,
        tokenAddress: input.tokenAddress,
        toAddress: input.toAddress,
        confirmations: input.confirmations,
      });
      const t = onSourceChecked(state, outcome);
      if (t) await apply(t);
      // A transfer that stays shallow (e.g. back in the mempool after a reorg) is re-read less often.
      else await sleep((sourceChecks += 1) > SLOW_AFTER_CHECKS ? SLOW_POLL_MS : pollMs);
    } else if (state.status === 'settling') {
      await settle();
    } else {
      // requires_intervention: held on purpose; only an operator's resolution wakes it.
      await condition(() => queue.length > 0);
      await resolve(queue.shift()!);
    }
  }
  return { status: state.status, statusVersion: state.statusVersion };
}
