import { condition, continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
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
import {
  fromPersistedState,
  toPersistedState,
  toPersistedTransition,
  type PersistedDepositState,
} from '../src/domain/deposits/pure/deposit-serde';
import { toOperatorAction, type ResolutionRequest } from '../src/domain/operators/pure/operator-resolution';
import { safetyNetFloorMs, safetyNetMs } from '../src/domain/chain/pure/confirmation-polling';
import { refusalReason } from '../src/domain/settlement/pure/hold-reasons';
import { resolveDepositSignal, type DepositWorkflowInput, type DepositWorkflowResult } from './contracts/deposit';
import { isDataError } from './contracts/failures';
import { holdingDataErrors } from './data-hold';
import { SINGLE_ATTEMPT } from './retry-profiles';
import { settleOnce } from './settle';
import { shortSteps, type ShortSteps } from './short-steps';
import { blockWaiter } from './wait';

/** Source reads at the fast pace before a still-shallow source is read ever less often. */
const SLOW_AFTER_CHECKS = 300;

const singleAttempt = proxyActivities<DepositActivities>(SINGLE_ATTEMPT);

const nowIso = () => new Date(Date.now()).toISOString();

/**
 * One inbound transfer's whole lifecycle (workflow id = depositWorkflowId(chainId, txHash, logIndex)).
 * A thin loop: the pure deposit machine decides, activities persist each transition with its events
 * and ledger postings. The stored deposit is the state, so a continue-as-new (or a rerun after a
 * failed run) resumes from the database.
 */
export async function depositWorkflow(input: DepositWorkflowInput): Promise<DepositWorkflowResult> {
  const { steps, patched } = shortSteps<DepositActivities>({ activityTasks: input.policy.shortStepsLocal === false });
  const queue: ResolutionRequest[] = [];
  setHandler(resolveDepositSignal, (request) => void queue.push(request));
  const blocks = blockWaiter();
  const recorded = await recordDetected(input, queue, steps);
  if (!recorded) return { status: 'failed', statusVersion: 0 };
  const run = new DepositRun(input, fromPersistedState(recorded), queue, blocks, steps, patched);

  while (!isTerminal(run.state)) {
    // Resolutions only mean something while held; any others are dropped here.
    while (queue.length > 0 && run.state.status !== 'requires_intervention') queue.shift();
    // The stored deposit is the state: a new run resumes from it (never with a resolution still queued).
    if (workflowInfo().continueAsNewSuggested && queue.length === 0) await continueAsNew<typeof depositWorkflow>(input);
    await run.step();
  }
  return { status: run.state.status, statusVersion: run.state.statusVersion };
}

/**
 * Records the deposit (idempotent: answers the stored deposit when an earlier run already did). A
 * row the database refuses for its data has no row to hold: the activity raised its alert, and the
 * run waits for an operator. Retry writes it again; fail ends the run with nothing recorded (null).
 */
async function recordDetected(
  input: DepositWorkflowInput,
  queue: ResolutionRequest[],
  steps: ShortSteps<DepositActivities>,
): Promise<PersistedDepositState | null> {
  const initial = detect({
    amountAtomic: BigInt(input.amountAtomic),
    minimum: { amountAtomic: BigInt(input.minimumDeposit.amountAtomic), inclusive: input.minimumDeposit.inclusive },
    platformFeeBps: input.fees.platformFeeBps,
    partnerFeeBps: input.fees.partnerFeeBps,
    assetAccepted: input.assetAccepted,
  });
  for (;;) {
    try {
      return await steps.recordDepositDetected(input, { state: toPersistedState(initial.state), events: initial.events, at: nowIso() });
    } catch (err) {
      if (!isDataError(err)) throw err;
    }
    await condition(() => queue.length > 0);
    const request = queue.shift()!;
    if (request.action === 'fail') {
      await steps.failUnrecordedDeposit({ depositId: input.depositId, actor: request.actor, reason: request.reason ?? null });
      return null;
    }
    // retry (mark-settled is refused before it is sent: there is nothing recorded to settle)
  }
}

/** The statuses a data error holds a deposit from (before that, nothing is stored to hold). */
const holdsFrom = (status: DepositState['status']): status is DataHoldFrom =>
  status === 'detected' || status === 'confirming' || status === 'settling';

/** One recorded deposit's run: its state, and each step of the loop, persisted through the machine. */
class DepositRun {
  private sourceChecks = 0;
  /** Where a data error held the deposit (this run's memory: the stored status is requires_intervention). */
  private dataHoldFrom: DataHoldFrom | undefined;
  private readonly schedule: { firstMs: number; maxMs: number; fastRounds: number };

  constructor(
    private readonly input: DepositWorkflowInput,
    public state: DepositState,
    private readonly queue: ResolutionRequest[],
    private readonly blocks: ReturnType<typeof blockWaiter>,
    /** The database writes and chain reads (short-steps.ts). */
    private readonly steps: ShortSteps<DepositActivities>,
    /** Runs under the short-steps patch: a settlement's first check waits for a block. */
    private readonly shortStepsPatched: boolean,
  ) {
    const pollMs = input.policy.confirmationPollSeconds * 1000;
    this.schedule = { firstMs: pollMs, maxMs: pollMs, fastRounds: SLOW_AFTER_CHECKS };
  }

  /** One step of the loop, by status; requires_intervention: held on purpose, only an operator's resolution wakes it. */
  async step(): Promise<void> {
    if (this.state.status === 'detected') return this.holding(() => this.apply(onConfirming(this.state)));
    if (this.state.status === 'confirming') return this.holding(() => this.checkSource());
    if (this.state.status === 'settling') return this.holding(() => this.settle());
    await condition(() => this.queue.length > 0);
    await this.holding(() => this.resolve(this.queue.shift()!));
  }

  private async apply(t: Transition | null): Promise<void> {
    if (!t) return;
    await this.steps.persistDepositTransition(this.input.depositId, toPersistedTransition(t, nowIso()));
    this.state = t.state;
  }

  /** A data error holds the deposit (data-hold.ts), remembering the status the refused step started from. */
  private holding(step: () => Promise<void>): Promise<void> {
    const from = this.state.status;
    return holdingDataErrors(step, async () => {
      const held = onDataError(this.state);
      await this.apply(held);
      if (held && holdsFrom(from)) this.dataHoldFrom = from;
    });
  }

  /** Reads the source transfer at the confirmation depth; one that stays shallow (e.g. back in the mempool after a reorg) is re-read less often. */
  private async checkSource(): Promise<void> {
    const { input } = this;
    const outcome = await this.steps.verifyDepositSource({
      chainId: input.chainId,
      txHash: input.txHash,
      logIndex: input.logIndex,
      ordinal: input.ordinal,
      tokenAddress: input.tokenAddress,
      toAddress: input.toAddress,
      confirmations: input.confirmations,
    });
    const t = onSourceChecked(this.state, outcome);
    if (t) return this.apply(t);
    const wait = safetyNetMs(this.sourceChecks + 1, this.schedule, safetyNetFloorMs(input.policy));
    if ((await this.blocks.wait(() => false, wait)) === 'timer') this.sourceChecks += 1;
  }

  private settle(): Promise<void> {
    const { input } = this;
    return settleOnce({
      broadcast: () => singleAttempt.broadcastDepositSettlement({ depositId: input.depositId }),
      check: () => this.steps.checkDepositSettlement({ depositId: input.depositId, confirmations: input.confirmations }),
      refused: (reasonCode) => this.apply(onSettlementTrouble(this.state, refusalReason(reasonCode))),
      attemptFailed: async () => {
        await this.apply(onSettlementAttemptFailed(this.state, { maxAttempts: input.policy.maxAttempts }));
        return this.state.status === 'settling' ? input.policy.retryBackoffSeconds * 1000 * 2 ** (this.state.settlementAttempts - 1) : null;
      },
      broadcastDone: (txHash) => this.apply(onSettlementBroadcast(this.state, txHash)),
      minedTxHash: () => this.steps.depositSettlementTxHash({ depositId: input.depositId }),
      confirmed: (txHash) => this.apply(onSettlementConfirmed(this.state, txHash, nowIso())),
      trouble: (reason) => this.apply(onSettlementTrouble(this.state, reason)),
      // The settlement's budget is counted in the timer's rounds (never slowed down, as a source's are).
      waitBeforeCheck: (check) =>
        this.blocks.wait(() => false, safetyNetMs(check, { ...this.schedule, fastRounds: Infinity }, safetyNetFloorMs(input.policy))),
      maxConfirmationChecks: input.policy.maxConfirmationChecks,
      checkAfterABlock: this.shortStepsPatched,
    });
  }

  private async resolve(request: ResolutionRequest): Promise<void> {
    const { depositId } = this.input;
    const dataHeld = isDataHold(this.state);
    // A run that did not see the hold (a new run: continue-as-new, a rerun) reads where it stood from the books.
    const from =
      dataHeld && this.dataHoldFrom === undefined && request.action !== 'mark-settled'
        ? await this.steps.depositDataHoldFrom({ depositId })
        : this.dataHoldFrom;
    const resolved = onOperatorResolution(this.state, toOperatorAction(request), dataHeld ? { dataHoldFrom: from } : {});
    if (!resolved) return; // not held: a stray or repeated resolution changes nothing
    await this.steps.recordDepositResolution({
      id: `${depositId}:resolution:${this.state.statusVersion}`,
      depositId,
      action: request.action,
      txHash: request.txHash,
      reason: request.reason,
      actor: request.actor,
    });
    // The operator's payout must be on chain as claimed (the CLI checked it; checked again here); the
    // settlement then pays what is left (the fees).
    if (request.action === 'mark-settled' && !(await this.steps.recordManualDepositPayout({ depositId, txHash: request.txHash ?? '' })))
      return;
    await this.apply(resolved.transition);
  }
}
