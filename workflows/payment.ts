import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { PaymentActivities } from '../activities/payments';
import {
  decideCancel,
  initialState,
  nextStep,
  onDataError,
  onExpired,
  onOperatorResolution,
  onSettlementAttemptFailed,
  onSettlementBroadcast,
  onSettlementConfirmed,
  onSettlementTrouble,
  onTransferDetected,
  onTransfersVerified,
  unresolvedTransfers,
  type PaymentState,
  type PaymentStep,
  type Transition,
} from '../src/domain/payments/pure/payment-machine';
import { fromCarriedState, toCarriedState, toPersistedTransition } from '../src/domain/payments/pure/payment-serde';
import { onPayoutHeld, onPayoutUpdate, onProviderFunded } from '../src/domain/payments/pure/payout-machine';
import { toOperatorAction, type ResolutionRequest } from '../src/domain/operators/pure/operator-resolution';
import { safetyNetFloorMs, safetyNetMs } from '../src/domain/chain/pure/confirmation-polling';
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
import { holdingDataErrors } from './data-hold';
import { SINGLE_ATTEMPT, UNTIL_DONE } from './retry-profiles';
import { settleOnce } from './settle';
import { shortSteps, type ShortSteps } from './short-steps';
import { sandboxClock } from './sandbox-clock';
import { blockWaiter, runIsLong, wakeOn } from './wait';

// A provider's payout calls: activity tasks whatever the run (shortSteps is for the database and the chain).
const untilDone = proxyActivities<PaymentActivities>({ ...UNTIL_DONE, startToCloseTimeout: '30s' });
const singleAttempt = proxyActivities<PaymentActivities>(SINGLE_ATTEMPT);

type Command =
  | { type: 'transfer'; transfer: TransferSeen }
  | { type: 'payout'; update: PayoutUpdateSeen }
  | { type: 'resolve'; resolution: ResolutionRequest }
  | { type: 'cancel'; id: number; request: CancelRequest }
  // The sandbox clock moved: nothing to do but decide again (a timer may now be due).
  | { type: 'clock' };

const nowIso = () => new Date(Date.now()).toISOString();

/**
 * One Payment's whole lifecycle (workflow id = Payment id). A thin loop: messages go into a queue,
 * the pure payment machine decides the next step (nextStep), the run carries it out, and activities
 * persist each transition with its events. Every transfer seen is followed until it is confirmed or
 * dropped, so the run ends only when the Payment is final and nothing it saw is still confirming; a
 * transfer that comes later starts a new run from the stored Payment (input.resume). Long runs
 * continue as new, carrying the state.
 */
export async function paymentWorkflow(input: PaymentWorkflowInput): Promise<PaymentWorkflowResult> {
  const { steps, patched } = shortSteps<PaymentActivities>({ activityTasks: input.settlement.shortStepsLocal === false });
  const queue: Command[] = [];
  const state = await startingState(input, queue, steps);
  setHandler(transferDetectedSignal, (transfer) => void queue.push({ type: 'transfer', transfer }));
  setHandler(resolveSignal, (resolution) => void queue.push({ type: 'resolve', resolution }));
  setHandler(payoutUpdatedSignal, (update) => void queue.push({ type: 'payout', update }));
  const clock = sandboxClock(input.carried?.clockAdvancedSeconds ?? 0, () => void queue.push({ type: 'clock' }));
  const run = new PaymentRun(input, state, queue, blockWaiter(), steps, patched, clock.nowMs);
  setHandler(cancelUpdate, (request) => run.cancel(request));

  for (;;) {
    const step = nextStep(run.state, {
      queued: queue.length,
      nowMs: clock.nowMs(),
      expiresAtMs: run.expiresAtMs,
      chainReadThroughExpiry: run.expiryRead.read,
      runIsLong: runIsLong(input.settlement.maxRunEvents),
    });
    if (step.kind === 'done') return { status: run.state.status, statusVersion: run.state.statusVersion };
    if (step.kind === 'continue-as-new') {
      await condition(allHandlersFinished);
      await continueAsNew<typeof paymentWorkflow>({
        ...input,
        resume: undefined,
        carried: {
          state: toCarriedState(run.state),
          expiresAtMs: run.expiresAtMs,
          ...(clock.advancedSeconds > 0 ? { clockAdvancedSeconds: clock.advancedSeconds } : {}),
        },
      });
    }
    await run.perform(step);
  }
}

/** The state a run starts from: carried across continue-as-new, loaded for a resumed Payment, or new. */
async function startingState(input: PaymentWorkflowInput, queue: Command[], steps: ShortSteps<PaymentActivities>): Promise<PaymentState> {
  if (input.carried) return fromCarriedState(input.carried.state);
  const state = initialState(input.intent, BigInt(input.requiredAtomic));
  if (input.resume) {
    const stored = await steps.loadPaymentState(input.paymentId);
    // Recorded by the scanner, never taken by a run (a lost signal): taken now, as if just seen.
    for (const transfer of stored.unacknowledged) queue.push({ type: 'transfer', transfer });
    return fromCarriedState(stored.state);
  }
  if (input.payout) {
    const quoteExpiresAt = new Date(workflowInfo().startTime.getTime() + input.payout.quoteExpiresInSeconds * 1000).toISOString();
    return { ...state, payout: { quoteExpiresAt, offrampStatus: null, refundTxHash: null } };
  }
  return state;
}

/** The provider's failure type of a payout activity that failed (PROVIDER_STATE_UNCERTAIN, PROVIDER_FAILURE...). */
function providerFailureType(err: unknown): string | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}

const isProviderFailure = (err: unknown) =>
  providerFailureType(err) === PROVIDER_STATE_UNCERTAIN || providerFailureType(err) === PROVIDER_FAILURE;

/** One Payment run: its state, its messages, and the steps nextStep names, each persisted through the machine. */
class PaymentRun {
  /**
   * On the workflow's clock when it started the Payment. A resumed run of a Payment that had moved on
   * only has the stored expiresAt; one never moved (an orphan) times it from its own start, as a first
   * run does: a payer who paid in time is not called late for our delay.
   */
  readonly expiresAtMs: number;
  /** How far the chain is read for expiry (chainReadThroughExpiry). */
  readonly expiryRead = { block: null as string | null, read: false, poked: false, round: 0 };
  private readonly cancelOutcomes = new Map<number, CancelResult | ApplicationFailure>();
  /** Transfers whose step the database refused for its data (offered again on the operator's retry). */
  private readonly refusedSteps: Command[] = [];
  private nextCancelId = 0;
  private verifyRound = 0;
  /** Reads start fast (a confirmation often lands within a block), then back off (confirmation-polling.ts). */
  private readonly schedule: { firstMs: number; maxMs: number; fastRounds: number };
  private readonly safetyNetFloor: number;

  constructor(
    private readonly input: PaymentWorkflowInput,
    public state: PaymentState,
    private readonly queue: Command[],
    private readonly blocks: ReturnType<typeof blockWaiter>,
    /** The database writes and chain reads (short-steps.ts). */
    private readonly steps: ShortSteps<PaymentActivities>,
    /** Runs under the short-steps patch: a settlement's first check waits for a block. */
    private readonly shortStepsPatched: boolean,
    /** The Payment's clock for its deadlines (its quote's): the workflow clock unless a sandbox app moved it. */
    private readonly clockNowMs: () => number,
  ) {
    const { settlement } = input;
    this.schedule = { firstMs: settlement.confirmationPollSeconds * 1000, maxMs: settlement.maxPollSeconds * 1000, fastRounds: 150 };
    this.safetyNetFloor = safetyNetFloorMs(settlement);
    this.expiresAtMs =
      input.carried?.expiresAtMs ??
      (input.resume && state.statusVersion > 1
        ? Date.parse(input.expiresAt)
        : workflowInfo().startTime.getTime() + input.expiresInSeconds * 1000);
  }

  /** Carries out one step nextStep named (done and continue-as-new are the workflow's own). */
  async perform(step: PaymentStep): Promise<void> {
    switch (step.kind) {
      case 'take-messages':
        return this.drain();
      case 'await-operator':
        return void (await condition(() => this.queue.length > 0));
      case 'verify-transfers':
        await this.waitToVerify();
        return this.holding(() => this.verifyTransfers());
      case 'await-expiry':
        return void (await wakeOn(() => this.queue.length > 0, step.ms));
      case 'read-chain-through-expiry':
        return this.readChainThroughExpiry();
      case 'expire':
        return this.holding(() => this.apply(onExpired(this.state)));
      case 'request-payout':
        return this.holding(() => this.requestPayout());
      case 'follow-payout':
        return this.holding(() => this.followPayout());
      case 'settle':
        return this.holding(() => this.settle());
      case 'done':
      case 'continue-as-new':
        return;
    }
  }

  /** The cancel update: queued like every message; the caller waits for its outcome. */
  async cancel(request: CancelRequest): Promise<CancelResult> {
    const id = this.nextCancelId++;
    this.queue.push({ type: 'cancel', id, request });
    await condition(() => this.cancelOutcomes.has(id));
    const outcome = this.cancelOutcomes.get(id)!;
    if (outcome instanceof ApplicationFailure) throw outcome;
    return outcome;
  }

  private async apply(t: Transition | null): Promise<void> {
    if (!t) return;
    await this.steps.persistPaymentTransition(this.input.paymentId, toPersistedTransition(t, nowIso()));
    this.state = t.state;
  }

  /** A data error holds the Payment (data-hold.ts); a refused transfer is offered again on release. */
  private holding(step: () => Promise<void>, cmd?: Command): Promise<void> {
    return holdingDataErrors(step, async () => {
      if (cmd?.type === 'transfer') this.refusedSteps.push(cmd);
      await this.apply(onDataError(this.state));
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const cmd = this.queue.shift()!;
      await this.holding(() => this.handle(cmd), cmd);
    }
  }

  private async handle(cmd: Command): Promise<void> {
    if (cmd.type === 'transfer') {
      const transfer = { key: cmd.transfer.key, amountAtomic: BigInt(cmd.transfer.amountAtomic), txHash: cmd.transfer.txHash };
      await this.apply(onTransferDetected(this.state, transfer));
    } else if (cmd.type === 'payout') {
      // A bank Payment's payout leg: only bank Payments have one (onPayoutUpdate answers null for the others).
      await this.apply(onPayoutUpdate(this.state, cmd.update, nowIso()));
    } else if (cmd.type === 'cancel') {
      await this.takeCancel(cmd);
    } else if (cmd.type === 'resolve') {
      await this.takeResolution(cmd.resolution);
    }
  }

  private async takeCancel(cmd: Extract<Command, { type: 'cancel' }>): Promise<void> {
    const decision = decideCancel(this.state, cmd.request.reasonCode, cmd.request.reason, nowIso());
    try {
      if (decision.outcome === 'cancelled') await this.apply(decision.transition);
    } catch (err) {
      // The caller gets an answer (the update must not wait forever); the Payment is then held.
      if (isDataError(err)) {
        this.cancelOutcomes.set(
          cmd.id,
          ApplicationFailure.create({ type: DATA_ERROR, message: 'The cancellation could not be stored', nonRetryable: true }),
        );
      }
      throw err;
    }
    this.cancelOutcomes.set(
      cmd.id,
      decision.outcome === 'refused'
        ? ApplicationFailure.create({
            type: PAYMENT_NOT_CANCELABLE,
            message: decision.message,
            details: [decision.reasonCode],
            nonRetryable: true,
          })
        : { outcome: decision.outcome },
    );
  }

  private async takeResolution(resolution: ResolutionRequest): Promise<void> {
    const { paymentId } = this.input;
    const resolved = onOperatorResolution(this.state, toOperatorAction(resolution));
    if (!resolved) return; // nothing on hold: a stray or repeated resolution changes nothing
    await this.steps.recordPaymentResolution({
      paymentId,
      id: `${paymentId}:resolution:${this.state.statusVersion}:${nowIso()}`,
      ...resolution,
    });
    // The operator's payout must be on chain as claimed (the CLI checked it; checked again here).
    if (resolution.action === 'mark-settled' && !(await this.steps.recordManualPayout({ paymentId, txHash: resolution.txHash ?? '' })))
      return;
    await this.apply(resolved.transition);
    // Released: the steps a data error stopped are offered again.
    this.queue.unshift(...this.refusedSteps.splice(0));
  }

  /** Until a transfer seen should be read again: the next block, a message, or the safety-net timer. */
  private async waitToVerify(): Promise<void> {
    const woke = await this.blocks.wait(() => this.queue.length > 0, safetyNetMs(this.verifyRound, this.schedule, this.safetyNetFloor));
    if (woke === 'timer') this.verifyRound += 1;
  }

  private async verifyTransfers(): Promise<void> {
    const { input } = this;
    const results = await this.steps.verifyPaymentTransfers({
      chainId: input.chainId,
      token: input.tokenAddress,
      to: input.escrowAddress,
      confirmations: input.confirmations,
      transfers: unresolvedTransfers(this.state).map((t) => t.key),
    });
    const verified = onTransfersVerified(this.state, results, nowIso(), new Date(this.clockNowMs()).toISOString());
    if (verified) this.verifyRound = 0;
    await this.apply(verified);
  }

  /**
   * Expiry waits until the scanner has read the chain through the head of the moment expiresAt came:
   * a payer who paid in time is never called late because the scanner was behind. The scanner is
   * poked once; the chain is then read again on a timer that backs off from 1 s to 30 s, so a
   * scanner far behind is not also asked by every Payment due meanwhile (a transfer it hands over
   * wakes us at once).
   */
  private async readChainThroughExpiry(): Promise<void> {
    const read = this.expiryRead;
    const answer = await this.steps.chainReadThrough({ chainId: this.input.chainId, block: read.block });
    read.block = answer.block;
    read.read = answer.read;
    if (read.read) return;
    if (!read.poked) {
      read.poked = true;
      // Best effort: a scanner not running now reads on when it starts.
      await getExternalWorkflowHandle(chainScannerWorkflowId(this.input.chainId))
        .signal(pokeSignal)
        .catch(() => undefined);
    }
    await wakeOn(() => this.queue.length > 0, Math.min(1000 * 2 ** read.round++, 30_000));
  }

  private settle(): Promise<void> {
    const { input } = this;
    const { paymentId, settlement } = input;
    return settleOnce({
      broadcast: () => singleAttempt.broadcastSettlement({ paymentId }),
      check: () => this.steps.checkSettlement({ paymentId, confirmations: input.confirmations }),
      refused: (reasonCode) => this.apply(onSettlementTrouble(this.state, refusalReason(reasonCode))),
      attemptFailed: async () => {
        await this.apply(onSettlementAttemptFailed(this.state, { maxAttempts: settlement.maxAttempts }));
        return this.state.operationalState === 'retrying'
          ? settlement.retryBackoffSeconds * 1000 * 2 ** (this.state.settlementAttempts - 1)
          : null;
      },
      broadcastDone: (txHash) => this.apply(onSettlementBroadcast(this.state, txHash)),
      minedTxHash: () => this.steps.settlementTxHash({ paymentId }),
      // A bank Payment's settlement paid the provider: its payout is next.
      confirmed: (txHash) =>
        this.apply(this.state.payout ? onProviderFunded(this.state, txHash) : onSettlementConfirmed(this.state, txHash, nowIso())),
      trouble: (reason) => this.apply(onSettlementTrouble(this.state, reason)),
      // Transfers keep arriving while the settlement confirms (duplicates): record them meanwhile.
      waitBeforeCheck: async (check) => {
        const woke = await this.blocks.wait(() => this.queue.length > 0, safetyNetMs(check, this.schedule, this.safetyNetFloor));
        await this.drain();
        return woke;
      },
      maxConfirmationChecks: settlement.maxConfirmationChecks,
      checkAfterABlock: this.shortStepsPatched,
    });
  }

  /**
   * The money is at the provider: ask for the payout once (the Payment id is its idempotency key). A
   * provider that can't tell, or refuses, holds the Payment (never resubmitted blind).
   */
  private async requestPayout(): Promise<void> {
    try {
      await this.apply(onPayoutUpdate(this.state, await untilDone.requestPayout({ paymentId: this.input.paymentId }), nowIso()));
    } catch (err) {
      const type = providerFailureType(err);
      if (type !== PROVIDER_STATE_UNCERTAIN && type !== PROVIDER_FAILURE) throw err;
      await this.apply(onPayoutHeld(this.state, type));
    }
  }

  /**
   * Follows the payout through the provider's callbacks (signals), with a slow read as a safety net;
   * reads go on while a provider that can't tell holds the Payment. Transfers seen meanwhile (its
   * refund) are followed too.
   */
  private async followPayout(): Promise<void> {
    if (await wakeOn(() => this.queue.length > 0, (this.input.settlement.payoutPollSeconds ?? 60) * 1000)) return;
    if (unresolvedTransfers(this.state).length > 0) await this.verifyTransfers();
    try {
      const read = await untilDone.readPayout({ paymentId: this.input.paymentId });
      if (read) await this.apply(onPayoutUpdate(this.state, read, nowIso()));
    } catch (err) {
      // A read the provider can't answer changes nothing: the next round reads again.
      if (!isProviderFailure(err)) throw err;
    }
  }
}
