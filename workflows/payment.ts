import {
  ActivityFailure, allHandlersFinished, ApplicationFailure, condition, continueAsNew, getExternalWorkflowHandle, patched, proxyActivities, setHandler, workflowInfo,
} from '@temporalio/workflow';
import type { PaymentActivities } from '../activities/payments';
import {
  decideCancel,
  initialState,
  isDataHold,
  isOpen,
  isTerminal,
  onDataError,
  onExpired,
  onOperatorResolution,
  onSettlementAttemptFailed,
  onSettlementBroadcast,
  onSettlementConfirmed,
  onSettlementTrouble,
  onTransferDetected,
  onTransfersVerified,
  pendingTransfers,
  unresolvedTransfers,
  type PaymentState,
  type Transition,
} from '../src/domain/payments/pure/payment-machine';
import { fromCarriedState, toCarriedState, toPersistedTransition } from '../src/domain/payments/pure/payment-serde';
import { awaitsPayout, onPayoutHeld, onPayoutUpdate, onProviderFunded } from '../src/domain/payments/pure/payout-machine';
import { toOperatorAction, type ResolutionRequest } from '../src/domain/operators/pure/operator-resolution';
import { confirmationPollMs, safetyNetFloorMs, safetyNetMs } from '../src/domain/chain/pure/confirmation-polling';
import { refusalReason } from '../src/domain/settlement/pure/hold-reasons';
import {
  cancelUpdate,
  PAYMENT_NOT_CANCELABLE,
  payoutUpdatedSignal,
  PROVIDER_FAILURE,
  PROVIDER_STATE_UNCERTAIN,
  resolveSignal,
  transferDetectedSignal,
  type CancelRequest,
  type CancelResult,
  type PaymentWorkflowInput,
  type PaymentWorkflowResult,
  type PayoutUpdateSeen,
  type TransferSeen,
} from './contracts/payment';
import { DATA_ERROR, isDataError } from './contracts/failures';
import { chainScannerWorkflowId, pokeSignal } from './contracts/chain-scanner';
import { SINGLE_ATTEMPT, UNTIL_DONE } from './retry-profiles';
import { settleOnce } from './settle';
import { blockWaiter, runIsLong, wakeOn } from './wait';

const untilDone = proxyActivities<PaymentActivities>({ ...UNTIL_DONE, startToCloseTimeout: '30s' });
const singleAttempt = proxyActivities<PaymentActivities>(SINGLE_ATTEMPT);

type Command =
  | { type: 'transfer'; transfer: TransferSeen }
  | { type: 'payout'; update: PayoutUpdateSeen }
  | { type: 'resolve'; resolution: ResolutionRequest }
  | { type: 'cancel'; id: number; request: CancelRequest };

/**
 * One Payment's whole lifecycle (workflow id = Payment id). A thin loop: messages go into a queue,
 * the pure payment machine decides, and activities persist each transition with its events. Every
 * transfer seen is followed until it is confirmed or dropped, so the run ends only when the Payment
 * is final and nothing it saw is still confirming; a transfer that comes later starts a new run from
 * the stored Payment (input.resume). Long runs continue as new, carrying the state.
 */
export async function paymentWorkflow(input: PaymentWorkflowInput): Promise<PaymentWorkflowResult> {
  // Runs started before this kept the older rule: a run ended at the final status, and only funding
  // transfers were followed, only while the Payment was open.
  const followsEveryTransfer = patched('payment-follows-every-transfer');
  // Runs started before this let an activity's data error fail the run (or, earlier, retry forever).
  const holdsDataErrors = patched('payment-holds-data-errors');
  // Runs before this read the chain on timers only; now every new block the scanner reads wakes them.
  const wakesOnBlocks = patched('payment-wakes-on-blocks');
  const queue: Command[] = [];
  let state: PaymentState = initialState(input.intent, BigInt(input.requiredAtomic));
  if (input.carried) {
    state = fromCarriedState(input.carried.state);
  } else if (input.resume) {
    const stored = await untilDone.loadPaymentState(input.paymentId);
    state = fromCarriedState(stored.state);
    // Recorded by the scanner, never taken by a run (a lost signal): taken now, as if just seen.
    for (const transfer of stored.unacknowledged) queue.push({ type: 'transfer', transfer });
  } else if (input.payout) {
    const quoteExpiresAt = new Date(workflowInfo().startTime.getTime() + input.payout.quoteExpiresInSeconds * 1000).toISOString();
    state = { ...state, payout: { quoteExpiresAt, offrampStatus: null, refundTxHash: null } };
  }
  // A bank Payment's payout leg: only bank Payments ask, so upa histories are unchanged.
  const bankPayout = state.payout !== undefined && patched('payment-bank-payout');
  const cancelOutcomes = new Map<number, CancelResult | ApplicationFailure>();
  // Transfers whose step the database refused for its data (offered again on the operator's retry).
  const refusedSteps: Command[] = [];
  let nextCancelId = 0;

  setHandler(transferDetectedSignal, (transfer) => void queue.push({ type: 'transfer', transfer }));
  setHandler(resolveSignal, (resolution) => void queue.push({ type: 'resolve', resolution }));
  setHandler(payoutUpdatedSignal, (update) => void queue.push({ type: 'payout', update }));
  const blocks = blockWaiter();
  setHandler(cancelUpdate, async (request) => {
    const id = nextCancelId++;
    queue.push({ type: 'cancel', id, request });
    await condition(() => cancelOutcomes.has(id));
    const outcome = cancelOutcomes.get(id)!;
    if (outcome instanceof ApplicationFailure) throw outcome;
    return outcome;
  });

  const nowIso = () => new Date(Date.now()).toISOString();
  const apply = async (t: Transition | null) => {
    if (!t) return;
    await untilDone.persistPaymentTransition(input.paymentId, toPersistedTransition(t, nowIso()));
    state = t.state;
  };

  async function handle(cmd: Command): Promise<void> {
    if (cmd.type === 'transfer') {
      const transfer = { key: cmd.transfer.key, amountAtomic: BigInt(cmd.transfer.amountAtomic), txHash: cmd.transfer.txHash };
      // Runs before this ignored a dropped transfer the chain mined again (patched only when it happens).
      const dropped = state.transfers.some((t) => t.key === transfer.key && t.status === 'dropped');
      await apply(onTransferDetected(state, transfer, { revivesDropped: dropped && patched('payment-revives-dropped-transfers') }));
    } else if (cmd.type === 'payout') {
      if (bankPayout) await apply(onPayoutUpdate(state, cmd.update, nowIso()));
    } else if (cmd.type === 'cancel') {
      const decision = decideCancel(state, cmd.request.reasonCode, cmd.request.reason, nowIso());
      try {
        if (decision.outcome === 'cancelled') await apply(decision.transition);
      } catch (err) {
        // The caller gets an answer (the update must not wait forever); the Payment is then held.
        if (holdsDataErrors && isDataError(err)) {
          cancelOutcomes.set(cmd.id, ApplicationFailure.create({ type: DATA_ERROR, message: 'The cancellation could not be stored', nonRetryable: true }));
        }
        throw err;
      }
      cancelOutcomes.set(
        cmd.id,
        decision.outcome === 'refused'
          ? ApplicationFailure.create({ type: PAYMENT_NOT_CANCELABLE, message: decision.message, details: [decision.reasonCode], nonRetryable: true })
          : { outcome: decision.outcome },
      );
    } else {
      const resolved = onOperatorResolution(state, toOperatorAction(cmd.resolution), nowIso(), { manualPayoutSettlesRest: followsEveryTransfer });
      if (!resolved) return; // nothing on hold: a stray or repeated resolution changes nothing
      await untilDone.recordPaymentResolution({
        paymentId: input.paymentId,
        id: `${input.paymentId}:resolution:${state.statusVersion}:${nowIso()}`,
        ...cmd.resolution,
      });
      // The operator's payout must be on chain as claimed (the CLI checked it; checked again here).
      if (followsEveryTransfer && cmd.resolution.action === 'mark-settled') {
        if (!(await untilDone.recordManualPayout({ paymentId: input.paymentId, txHash: cmd.resolution.txHash ?? '' }))) return;
      }
      await apply(resolved.transition);
      // Released: the steps a data error stopped are offered again.
      if (holdsDataErrors) queue.unshift(...refusedSteps.splice(0));
    }
  }

  /**
   * A data error (the database refused a write for its data: retrying the same write can't help)
   * holds the Payment for an operator instead of failing the run. The hold is written by an activity
   * too: if the database itself is down, that write is transient and retries.
   */
  async function holdingDataErrors(step: () => Promise<void>, cmd?: Command): Promise<void> {
    if (!holdsDataErrors) return step();
    try {
      await step();
    } catch (err) {
      if (!isDataError(err)) throw err;
      if (cmd?.type === 'transfer') refusedSteps.push(cmd);
      await apply(onDataError(state));
    }
  }

  const drain = async () => {
    while (queue.length > 0) {
      const cmd = queue.shift()!;
      await holdingDataErrors(() => handle(cmd), cmd);
    }
  };
  // Polls start fast (a confirmation often lands within a block) and back off to maxPollSeconds; a
  // transfer that stays unconfirmed is then read ever less often (runs before that polled on).
  const fastPollMs = (round: number) =>
    Math.min(input.settlement.confirmationPollSeconds * 1000 * 2 ** round, input.settlement.maxPollSeconds * 1000);
  const schedule = { firstMs: input.settlement.confirmationPollSeconds * 1000, maxMs: input.settlement.maxPollSeconds * 1000, fastRounds: 150 };
  const pollMs = (round: number) => (followsEveryTransfer ? confirmationPollMs(round, schedule) : fastPollMs(round));
  let verifyRound = 0;
  // Until a transfer seen should be read again: the next block, a message, or the timer.
  const waitToVerify = async () => {
    if (!wakesOnBlocks) return void (await wakeOn(() => queue.length > 0, pollMs(verifyRound++)));
    if ((await blocks.wait(() => queue.length > 0, safetyNetMs(verifyRound, schedule, safetyNetFloorMs(input.settlement)))) === 'timer') verifyRound += 1;
  };
  // On the workflow's clock when it started the Payment. A resumed run of a Payment that had moved on
  // only has the stored expiresAt; one never moved (an orphan) times it from its own start, as a first
  // run does: a payer who paid in time is not called late for our delay.
  const expiresAtMs =
    input.carried?.expiresAtMs ??
    (input.resume && state.statusVersion > 1 ? Date.parse(input.expiresAt) : workflowInfo().startTime.getTime() + input.expiresInSeconds * 1000);
  /**
   * Expiry waits until the scanner has read the chain through the head of the moment expiresAt came:
   * a payer who paid in time is never called late because the scanner was behind. The scanner is
   * poked once; the chain is then read again on a timer that backs off from 1 s to 30 s, so a
   * scanner far behind is not also asked by every Payment due meanwhile (a transfer it hands over
   * wakes us at once).
   */
  const expiryRead = { block: null as string | null, read: false, poked: false, round: 0 };
  async function chainReadThroughExpiry(): Promise<void> {
    const answer = await untilDone.chainReadThrough({ chainId: input.chainId, block: expiryRead.block });
    expiryRead.block = answer.block;
    expiryRead.read = answer.read;
    if (expiryRead.read) return;
    if (!expiryRead.poked) {
      expiryRead.poked = true;
      // Best effort: a scanner not running now reads on when it starts.
      await getExternalWorkflowHandle(chainScannerWorkflowId(input.chainId)).signal(pokeSignal).catch(() => undefined);
    }
    await wakeOn(() => queue.length > 0, Math.min(1000 * 2 ** expiryRead.round++, 30_000));
  }
  const unresolved = () => (followsEveryTransfer ? unresolvedTransfers(state) : pendingTransfers(state));
  // Done when final and nothing seen or queued is left to follow (a resumed run starts with its transfer queued).
  const finished = () => isTerminal(state) && (!followsEveryTransfer || (queue.length === 0 && unresolvedTransfers(state).length === 0));

  async function verifyTransfers(): Promise<void> {
    const results = await untilDone.verifyPaymentTransfers({
      chainId: input.chainId,
      token: input.tokenAddress,
      to: input.escrowAddress,
      confirmations: input.confirmations,
      transfers: unresolved().map((t) => t.key),
    });
    const verified = onTransfersVerified(state, results, nowIso());
    if (verified) verifyRound = 0;
    await apply(verified);
  }

  const settle = () =>
    settleOnce({
      broadcast: () => singleAttempt.broadcastSettlement({ paymentId: input.paymentId }),
      check: () => untilDone.checkSettlement({ paymentId: input.paymentId, confirmations: input.confirmations }),
      refused: (reasonCode) => apply(onSettlementTrouble(state, refusalReason(reasonCode))),
      attemptFailed: async () => {
        await apply(onSettlementAttemptFailed(state, { maxAttempts: input.settlement.maxAttempts }));
        return state.operationalState === 'retrying' ? input.settlement.retryBackoffSeconds * 1000 * 2 ** (state.settlementAttempts - 1) : null;
      },
      broadcastDone: (txHash) => apply(onSettlementBroadcast(state, txHash)),
      minedTxHash: async () => (patched('payment-settles-with-mined-replacement') ? untilDone.settlementTxHash({ paymentId: input.paymentId }) : null),
      // A bank Payment's settlement paid the provider: its payout is next.
      confirmed: (txHash) => apply(bankPayout ? onProviderFunded(state, txHash) : onSettlementConfirmed(state, txHash, nowIso())),
      trouble: (reason) => apply(onSettlementTrouble(state, reason)),
      // Transfers keep arriving while the settlement confirms (duplicates): record them meanwhile.
      waitBeforeCheck: async (check) => {
        const woke = wakesOnBlocks ? await blocks.wait(() => queue.length > 0, safetyNetMs(check, schedule, safetyNetFloorMs(input.settlement))) : await wakeOn(() => queue.length > 0, pollMs(check));
        await drain();
        return woke === 'early' ? 'early' : 'timer';
      },
      maxConfirmationChecks: input.settlement.maxConfirmationChecks,
      holdsDataErrors,
    });

  const payoutPollMs = (input.settlement.payoutPollSeconds ?? 60) * 1000;
  const providerFailureType = (err: unknown) => {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    return cause instanceof ApplicationFailure ? cause.type : undefined;
  };
  /**
   * The money is at the provider: ask for the payout once (the Payment id is its idempotency key),
   * then follow it through the provider's callbacks (signals), with a slow read as a safety net. A
   * provider that can't tell holds the Payment (never resubmitted blind); reads go on meanwhile.
   */
  async function drivePayout(): Promise<void> {
    if (state.payout!.offrampStatus === null && state.operationalState !== 'requires_intervention') {
      try {
        await apply(onPayoutUpdate(state, await untilDone.requestPayout({ paymentId: input.paymentId }), nowIso()));
      } catch (err) {
        const type = providerFailureType(err);
        if (type === PROVIDER_STATE_UNCERTAIN || type === PROVIDER_FAILURE) return apply(onPayoutHeld(state, type));
        throw err;
      }
      return;
    }
    if (await wakeOn(() => queue.length > 0, payoutPollMs)) return;
    if (unresolved().length > 0) await verifyTransfers();
    try {
      const read = await untilDone.readPayout({ paymentId: input.paymentId });
      if (read) await apply(onPayoutUpdate(state, read, nowIso()));
    } catch (err) {
      // A read the provider can't answer changes nothing: the next round reads again.
      if (providerFailureType(err) !== PROVIDER_STATE_UNCERTAIN && providerFailureType(err) !== PROVIDER_FAILURE) throw err;
    }
  }
  const followsPayout = () =>
    bankPayout && awaitsPayout(state) && (state.operationalState !== 'requires_intervention' || state.operationalReasonCode === 'provider_state_uncertain');

  while (!finished()) {
    await drain();
    if (finished()) break;
    if (followsEveryTransfer && runIsLong(input.settlement.maxRunEvents) && queue.length === 0) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof paymentWorkflow>({ ...input, resume: undefined, carried: { state: toCarriedState(state), expiresAtMs } });
    }
    if (holdsDataErrors && isDataHold(state)) {
      // Nothing is automated while a refused write waits for an operator (a cancel still runs).
      await condition(() => queue.length > 0);
    } else if (isOpen(state)) {
      const untilExpiry = expiresAtMs - Date.now();
      if (unresolved().length > 0) {
        await waitToVerify();
        await holdingDataErrors(verifyTransfers);
      } else if (untilExpiry <= 0) {
        // Runs before this expired on the clock alone, whatever the scanner had read.
        if (!expiryRead.read && patched('payment-expires-after-chain-read')) await chainReadThroughExpiry();
        else await holdingDataErrors(() => apply(onExpired(state)));
      } else {
        await wakeOn(() => queue.length > 0, untilExpiry);
      }
    } else if (followsPayout()) {
      await holdingDataErrors(drivePayout);
    } else if (followsEveryTransfer && unresolved().length > 0 && (isTerminal(state) || state.operationalState === 'requires_intervention')) {
      // Final or held: transfers it saw are still followed to their resolution (excess, late...).
      await waitToVerify();
      await holdingDataErrors(verifyTransfers);
    } else if (state.operationalState === 'requires_intervention') {
      // Held on purpose: only an operator's resolution (or a transfer to record) wakes it.
      await condition(() => queue.length > 0);
    } else {
      await holdingDataErrors(settle);
    }
  }
  await drain();
  return { status: state.status, statusVersion: state.statusVersion };
}
