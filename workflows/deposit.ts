import { condition, continueAsNew, patched, proxyActivities, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { DepositActivities } from '../activities/deposits';
import {
  detect,
  isDataHold,
  isTerminal,
  onConfirming,
  onDataError,
  onOperatorResolution,
  onSettlementAttemptFailed,
  onSettlementBroadcast,
  onSettlementConfirmed,
  onSettlementTrouble,
  onSourceChecked,
  type DataHoldFrom,
  type DepositState,
  type Transition,
} from '../src/domain/deposits/pure/deposit-machine';
import { fromPersistedState, toPersistedState, toPersistedTransition, type PersistedDepositState } from '../src/domain/deposits/pure/deposit-serde';
import { toOperatorAction, type ResolutionRequest } from '../src/domain/operators/pure/operator-resolution';
import { confirmationPollMs, safetyNetFloorMs, safetyNetMs } from '../src/domain/chain/pure/confirmation-polling';
import { refusalReason } from '../src/domain/settlement/pure/hold-reasons';
import { resolveDepositSignal, type DepositWorkflowInput, type DepositWorkflowResult } from './contracts/deposit';
import { isDataError } from './contracts/failures';
import { SINGLE_ATTEMPT, UNTIL_DONE } from './retry-profiles';
import { settleOnce } from './settle';
import { blockWaiter } from './wait';

const SLOW_AFTER_CHECKS = 300;
const SLOW_POLL_MS = 30_000;

const untilDone = proxyActivities<DepositActivities>({ ...UNTIL_DONE, startToCloseTimeout: '30s' });
const singleAttempt = proxyActivities<DepositActivities>(SINGLE_ATTEMPT);

/**
 * One inbound transfer's whole lifecycle (workflow id = depositWorkflowId(chainId, txHash, logIndex)).
 * A thin loop: the pure deposit machine decides, activities persist each transition with its events
 * and ledger postings. The stored deposit is the state, so a continue-as-new (or a rerun after a
 * failed run) resumes from the database.
 */
export async function depositWorkflow(input: DepositWorkflowInput): Promise<DepositWorkflowResult> {
  const queue: ResolutionRequest[] = [];
  setHandler(resolveDepositSignal, (request) => void queue.push(request));
  const blocks = blockWaiter();

  const nowIso = () => new Date(Date.now()).toISOString();
  const initial = detect({
    amountAtomic: BigInt(input.amountAtomic),
    minimum: { amountAtomic: BigInt(input.minimumDeposit.amountAtomic), inclusive: input.minimumDeposit.inclusive },
    platformFeeBps: input.fees.platformFeeBps,
    partnerFeeBps: input.fees.partnerFeeBps,
    assetAccepted: input.assetAccepted,
  });
  /**
   * Records the deposit (idempotent: answers the stored deposit when an earlier run already did). A
   * row the database refuses for its data has no row to hold: the activity raised its alert, and the
   * run waits for an operator. Retry writes it again; fail ends the run with nothing recorded (null).
   */
  async function recordDetected(): Promise<PersistedDepositState | null> {
    for (;;) {
      try {
        return await untilDone.recordDepositDetected(input, { state: toPersistedState(initial.state), events: initial.events, at: nowIso() });
      } catch (err) {
        // Runs before this failed here.
        if (!isDataError(err) || !patched('deposit-unrecorded-held')) throw err;
      }
      await condition(() => queue.length > 0);
      const request = queue.shift()!;
      if (request.action === 'fail') {
        await untilDone.failUnrecordedDeposit({ depositId: input.depositId, actor: request.actor, reason: request.reason ?? null });
        return null;
      }
      // retry (mark-settled is refused before it is sent: there is nothing recorded to settle)
    }
  }
  const recorded = await recordDetected();
  if (!recorded) return { status: 'failed', statusVersion: 0 };
  let state: DepositState = fromPersistedState(recorded);

  const apply = async (t: Transition | null) => {
    if (!t) return;
    await untilDone.persistDepositTransition(input.depositId, toPersistedTransition(t, nowIso()));
    state = t.state;
  };
  const pollMs = input.policy.confirmationPollSeconds * 1000;
  let sourceChecks = 0;
  // A source that stays shallow is read ever less often (runs before that read it every 30 s on).
  const backsOff = patched('deposit-source-polls-back-off');
  const schedule = { firstMs: pollMs, maxMs: pollMs, fastRounds: SLOW_AFTER_CHECKS };
  const sourcePollMs = (checks: number) => (backsOff ? confirmationPollMs(checks, schedule) : checks > SLOW_AFTER_CHECKS ? SLOW_POLL_MS : pollMs);
  // Runs before this read the chain on timers only; now every new block the scanner reads wakes them.
  const wakesOnBlocks = patched('deposit-wakes-on-blocks');

  // Runs before this let an activity's data error fail the run (or, earlier, retry forever).
  const holdsDataErrors = patched('deposit-holds-data-errors');
  // Where a data error held the deposit (this run's memory: the stored status is requires_intervention).
  let dataHoldFrom: DataHoldFrom | undefined;
  /**
   * A data error (the database refused a write for its data: retrying the same write can't help)
   * holds the deposit for an operator instead of failing the run. The hold is written by an activity
   * too: if the database itself is down, that write is transient and retries.
   */
  async function holdingDataErrors(step: () => Promise<void>): Promise<void> {
    if (!holdsDataErrors) return step();
    const from = state.status;
    try {
      await step();
    } catch (err) {
      if (!isDataError(err)) throw err;
      const held = onDataError(state);
      await apply(held);
      if (held && (from === 'detected' || from === 'confirming' || from === 'settling')) dataHoldFrom = from;
    }
  }

  async function resolve(request: ResolutionRequest): Promise<void> {
    // Runs before this recorded a hand-made payout as the whole settlement, fees included.
    const manualPayoutSettlesRest = request.action === 'mark-settled' && patched('deposit-manual-payout-pays-fees');
    const dataHeld = holdsDataErrors && isDataHold(state);
    // A run that did not see the hold (a new run: continue-as-new, a rerun) reads where it stood from
    // the books (runs before this ignored retry and fail then).
    const from =
      dataHeld && dataHoldFrom === undefined && request.action !== 'mark-settled' && patched('deposit-data-hold-from-books')
        ? await untilDone.depositDataHoldFrom({ depositId: input.depositId })
        : dataHoldFrom;
    const resolved = onOperatorResolution(state, toOperatorAction(request), nowIso(), {
      manualPayoutSettlesRest,
      ...(dataHeld ? { dataHoldFrom: from } : {}),
    });
    if (!resolved) return; // not held: a stray or repeated resolution changes nothing
    await untilDone.recordDepositResolution({
      id: `${input.depositId}:resolution:${state.statusVersion}`,
      depositId: input.depositId,
      action: request.action,
      txHash: request.txHash,
      reason: request.reason,
      actor: request.actor,
    });
    // The operator's payout must be on chain as claimed (the CLI checked it; checked again here).
    if (manualPayoutSettlesRest && !(await untilDone.recordManualDepositPayout({ depositId: input.depositId, txHash: request.txHash ?? '' }))) return;
    await apply(resolved.transition);
  }

  const settle = () =>
    settleOnce({
      broadcast: () => singleAttempt.broadcastDepositSettlement({ depositId: input.depositId }),
      check: () => untilDone.checkDepositSettlement({ depositId: input.depositId, confirmations: input.confirmations }),
      refused: (reasonCode) => apply(onSettlementTrouble(state, refusalReason(reasonCode))),
      attemptFailed: async () => {
        await apply(onSettlementAttemptFailed(state, { maxAttempts: input.policy.maxAttempts }));
        return state.status === 'settling' ? input.policy.retryBackoffSeconds * 1000 * 2 ** (state.settlementAttempts - 1) : null;
      },
      broadcastDone: (txHash) => apply(onSettlementBroadcast(state, txHash)),
      minedTxHash: async () => (patched('deposit-settles-with-mined-replacement') ? untilDone.depositSettlementTxHash({ depositId: input.depositId }) : null),
      confirmed: (txHash) => apply(onSettlementConfirmed(state, txHash, nowIso())),
      trouble: (reason) => apply(onSettlementTrouble(state, reason)),
      // The settlement's budget is counted in the timer's rounds (never slowed down, as a source's are).
      waitBeforeCheck: (check) => (wakesOnBlocks ? blocks.wait(() => false, safetyNetMs(check, { ...schedule, fastRounds: Infinity }, safetyNetFloorMs(input.policy))) : sleep(pollMs)),
      maxConfirmationChecks: input.policy.maxConfirmationChecks,
      holdsDataErrors,
    });

  while (!isTerminal(state)) {
    // Resolutions only mean something while held; any others are dropped here.
    while (queue.length > 0 && state.status !== 'requires_intervention') queue.shift();
    // The stored deposit is the state: a new run resumes from it (never with a resolution still queued).
    if (workflowInfo().continueAsNewSuggested && queue.length === 0) await continueAsNew<typeof depositWorkflow>(input);

    if (state.status === 'detected') {
      await holdingDataErrors(() => apply(onConfirming(state)));
    } else if (state.status === 'confirming') {
      await holdingDataErrors(async () => {
        const outcome = await untilDone.verifyDepositSource({
          chainId: input.chainId,
          txHash: input.txHash,
          logIndex: input.logIndex,
          ordinal: input.ordinal,
          tokenAddress: input.tokenAddress,
          toAddress: input.toAddress,
          confirmations: input.confirmations,
        });
        const t = onSourceChecked(state, outcome);
        if (t) await apply(t);
        // A transfer that stays shallow (e.g. back in the mempool after a reorg) is re-read less often.
        else if (!wakesOnBlocks) await sleep(sourcePollMs((sourceChecks += 1)));
        else if ((await blocks.wait(() => false, safetyNetMs(sourceChecks + 1, schedule, safetyNetFloorMs(input.policy)))) === 'timer') sourceChecks += 1;
      });
    } else if (state.status === 'settling') {
      await holdingDataErrors(settle);
    } else {
      // requires_intervention: held on purpose; only an operator's resolution wakes it.
      await condition(() => queue.length > 0);
      await holdingDataErrors(() => resolve(queue.shift()!));
    }
  }
  return { status: state.status, statusVersion: state.statusVersion };
}
