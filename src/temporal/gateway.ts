import {
  Client,
  Connection,
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type ClientInterceptors,
  type ScheduleDescription,
  type ScheduleOptions,
} from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { tracingStarted } from '../telemetry/tracing';
import { ApplicationFailure, type SignalDefinition } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import type { NativeConnection } from '@temporalio/worker';
import type {
  CancelOutcome,
  ChainAdvanceEngine,
  ChainWaiter,
  CancelRequest,
  DepositEngine,
  DepositRef,
  DepositStart,
  PaymentEngine,
  PaymentStart,
  TransferSeen,
  PayoutUpdateSeen,
  ClockAdvance,
  WebhookDeliveryStart,
  WebhookEngine,
  VaultFundingEngine,
  FundReturnEngine,
  OperatorEngine,
} from '../domain/engine/pure/engine';
import type { ResolutionRequest } from '../domain/operators/pure/operator-resolution';
import {
  CHAIN_SCANNER_WORKFLOW,
  chainScannerWorkflowId,
  pokeSignal,
  rescanFromSignal,
  type ChainScannerInput,
} from '../../workflows/contracts/chain-scanner';
import {
  DEPOSIT_SETTLEMENT_POLICY,
  DEPOSIT_WORKFLOW,
  depositWorkflowId,
  resolveDepositSignal,
  type DepositWorkflowInput,
} from '../../workflows/contracts/deposit';
import {
  DEPOSIT_RECONCILIATION_WORKFLOW,
  depositReconciliationWorkflowId,
  type ReconciliationInput,
  type ReconciliationSummary,
} from '../../workflows/contracts/deposit-reconciliation';
import {
  cancelUpdate,
  PAYMENT_NOT_CANCELABLE,
  PAYMENT_WORKFLOW,
  paymentWorkflowId,
  paymentWorkflowInput,
  resolveSignal,
  advanceClockSignal,
  transferDetectedSignal,
  payoutUpdatedSignal,
} from '../../workflows/contracts/payment';
import {
  LEDGER_RECONCILIATION_WORKFLOW,
  ledgerReconciliationWorkflowId,
  type LedgerReconciliationInput,
  type LedgerReconciliationSummary,
} from '../../workflows/contracts/ledger-reconciliation';
import {
  PAYMENT_RECONCILIATION_WORKFLOW,
  paymentReconciliationWorkflowId,
  type PaymentReconciliationInput,
  type PaymentReconciliationSummary,
} from '../../workflows/contracts/payment-reconciliation';
import { DATA_ERROR } from '../../workflows/contracts/failures';
import {
  FUND_RETURN_WORKFLOW,
  fundReturnWorkflowId,
  resolveFundReturnSignal,
  type FundReturnWorkflowInput,
} from '../../workflows/contracts/fund-return';
import { VAULT_FUNDING_WORKFLOW, vaultFundingWorkflowId, type VaultFundingWorkflowInput } from '../../workflows/contracts/vault-funding';
import { chainAdvancedSignal } from '../../workflows/contracts/chain-advanced';
import type { PaymentSettlementPolicy } from '../../workflows/contracts/payment';
import type { DepositSettlementPolicy } from '../../workflows/contracts/deposit';
import { SERVICE_SCHEDULES, type ServiceSchedule } from './schedules';
import { temporalInterceptors } from './deadlines';
import {
  DEFAULT_WEBHOOK_DISPATCHER,
  WEBHOOK_DELIVERY_WORKFLOW,
  WEBHOOK_DISPATCHER_WORKFLOW,
  WEBHOOK_DISPATCHER_WORKFLOW_ID,
  webhookDeliveryWorkflowId,
  webhookDispatcherKickSignal,
  webhookDispatchNowUpdate,
  type DispatchSummary,
  type WebhookDeliveryInput,
  type WebhookDispatcherInput,
} from '../../workflows/contracts/webhooks';

/**
 * The one module that talks to the Temporal client. Everything else (the API, the CLI, activities,
 * the benchmark, the tests) asks it for typed operations on the service's workflows, built from the
 * workflow contracts in workflows/contracts/. Engine errors are turned into typed outcomes here, so no
 * caller unpacks a WorkflowUpdateFailedError.
 */
export interface TemporalGateway
  extends PaymentEngine, DepositEngine, WebhookEngine, ChainAdvanceEngine, VaultFundingEngine, FundReturnEngine, OperatorEngine {
  readonly taskQueue: string;
  /** One cheap RPC that needs the frontend service to answer (health checks). */
  ping(): Promise<void>;

  /** One durable scanner per network; starting one that already runs is a no-op. */
  ensureChainScanners(chainIds: number[], opts: { pollSeconds: number; fromBlock?: string; waitForBlocks?: boolean }): Promise<void>;
  /** Wakes a network's scanner now instead of at its next poll. */
  pokeChainScanner(chainId: number): Promise<void>;
  /** Makes a network's scanner read again from a block on (owners count a transfer once). */
  rescanChain(chainId: number, fromBlock: bigint): Promise<void>;

  /** Runs one deposit reconciliation pass on the worker and answers its summary. */
  reconcileDeposits(input: ReconciliationInput): Promise<ReconciliationSummary & { startedAt: string }>;
  /** Runs one pass of the books against the chain on the worker (alerts included) and answers its summary. */
  runLedgerReconciliation(input?: LedgerReconciliationInput): Promise<LedgerReconciliationSummary & { startedAt: string }>;
  /** Runs one pass of the orphan Payment reconciler on the worker and answers its summary. */
  runPaymentReconciliation(input?: PaymentReconciliationInput): Promise<PaymentReconciliationSummary & { startedAt: string }>;
  /**
   * Creates the service's schedules (src/temporal/schedules.ts), or updates one whose definition
   * changed; an unchanged one is left alone, and an operator's pause is kept.
   */
  ensureSchedules(
    schedules?: readonly ServiceSchedule[],
  ): Promise<Array<{ scheduleId: string; outcome: 'created' | 'updated' | 'unchanged' }>>;

  /** Makes sure the webhook dispatcher runs (idempotent: a running one keeps its settings). */
  ensureWebhookDispatcher(options?: Partial<WebhookDispatcherInput>): Promise<{ started: boolean }>;
  /** Runs dispatch passes until everything committed before the call is dispatched. */
  dispatchWebhooksNow(): Promise<DispatchSummary>;
  /** Stops the dispatcher (tests; an operator's maintenance). Undelivered events wait for the next one. */
  stopWebhookDispatcher(reason: string): Promise<void>;

  /** For operators and tests: which run of a workflow is current, and its status (e.g. RUNNING, COMPLETED). */
  describeWorkflow(workflowId: string): Promise<{ runId: string; status: string }>;
  /** For operators and the simulation: workflows matching a visibility query, e.g. `ExecutionStatus = 'Running'`. */
  listWorkflows(query: string): Promise<WorkflowSummary[]>;
  /** For operators and the simulation: a running workflow's pending activities, to spot one that retries forever. */
  pendingActivities(workflowId: string): Promise<PendingActivity[]>;
}

export interface WorkflowSummary {
  workflowId: string;
  runId: string;
  type: string;
  /** RUNNING, COMPLETED, FAILED, TERMINATED, TIMED_OUT... */
  status: string;
}

export interface PendingActivity {
  activityType: string;
  /** The attempt running or about to run (1 = first). */
  attempt: number;
  lastFailure: string | null;
}

export interface GatewayOptions {
  /** Where the service's workflows run (one worker runs them all). */
  taskQueue: string;
  /**
   * How long a workflow update (a cancel) may take before the caller is told the engine is
   * unavailable (no worker, a wedged workflow task): a request never hangs on it.
   */
  updateTimeoutMs?: number;
  /**
   * Tests only: changes to the settlement policies of the workflows this gateway starts (e.g. a
   * confirmation poll of an hour, to show that blocks alone drive them). Read at each start.
   */
  policies?: {
    payment?: Partial<PaymentSettlementPolicy>;
    deposit?: Partial<DepositSettlementPolicy>;
    /**
     * `firstAttemptLocal: false` makes the first attempt an ordinary activity. The time-skipping test
     * server skips time while a workflow task runs a local activity, so the task times out and the
     * attempt runs again: correct but slow, so the harness turns it off except where it tests it.
     */
    webhookDelivery?: { firstAttemptLocal: boolean };
    /** `local: false` runs Payments' and deposits' short steps as activity tasks (workflows/short-steps.ts), for the same reason. */
    shortSteps?: { local: boolean };
  };
  /** Tests only: the safety-net floor of every workflow started (see PaymentSettlementPolicy). */
  safetyNetFloorSeconds?: number;
  /**
   * Delivery workflows are started eagerly: the start's answer carries their first task to the worker
   * sharing this client's NativeConnection (the worker's own gateway, workerWebhookStarter).
   */
  eagerWebhookDeliveries?: boolean;
}

export const DEFAULT_UPDATE_TIMEOUT_MS = 10_000;

const CONTINUE_AS_NEW_SIGNAL_ATTEMPTS = 5;

export function createTemporalGateway(client: Client, opts: GatewayOptions): TemporalGateway {
  const { taskQueue } = opts;
  const updateTimeoutMs = opts.updateTimeoutMs ?? DEFAULT_UPDATE_TIMEOUT_MS;
  const handle = (workflowId: string) => client.workflow.getHandle(workflowId);
  const fundReturnInput = (returnId: string, confirmations: number): FundReturnWorkflowInput => ({
    returnId,
    confirmations,
    pollSeconds: 1,
    maxChecks: 600,
  });
  const activityTaskSteps = () => (opts.policies?.shortSteps?.local === false ? { shortStepsLocal: false as const } : {});
  const depositInput = (start: DepositStart): DepositWorkflowInput => ({
    ...start,
    policy: {
      ...DEPOSIT_SETTLEMENT_POLICY,
      ...(opts.safetyNetFloorSeconds === undefined ? {} : { safetyNetFloorSeconds: opts.safetyNetFloorSeconds }),
      ...opts.policies?.deposit,
      ...activityTaskSteps(),
    },
  });
  const paymentInput = (payment: PaymentStart, confirmations: number, o: { resume?: boolean }) => {
    const input = paymentWorkflowInput(payment, confirmations, o);
    const floor = opts.safetyNetFloorSeconds === undefined ? {} : { safetyNetFloorSeconds: opts.safetyNetFloorSeconds };
    return opts.policies?.payment || opts.policies?.shortSteps || opts.safetyNetFloorSeconds !== undefined
      ? { ...input, settlement: { ...input.settlement, ...floor, ...opts.policies?.payment, ...activityTaskSteps() } }
      : input;
  };

  /** A finished (or never started) run is started again from the stored Payment to take the message. */
  async function signalPayment<T>(payment: PaymentStart, confirmations: number, signal: SignalDefinition<[T]>, arg: T) {
    await client.workflow.signalWithStart(PAYMENT_WORKFLOW, {
      taskQueue,
      workflowId: paymentWorkflowId(payment.id),
      args: [paymentInput(payment, confirmations, { resume: true })],
      signal,
      signalArgs: [arg],
    });
  }

  /**
   * Signals a workflow that continues as new (the scanner): in the moment between one run and the
   * next, a server can answer "completed" for the id; the next run is there a moment later.
   */
  async function signalLongLived<Args extends unknown[]>(workflowId: string, signal: SignalDefinition<Args>, ...args: Args) {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await handle(workflowId).signal(signal, ...args);
        return;
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError) || attempt >= CONTINUE_AS_NEW_SIGNAL_ATTEMPTS) throw err;
        await new Promise((r) => setTimeout(r, 50 * attempt));
      }
    }
  }

  /** Temporal refuses a second workflow with the same id: that refusal means "already there". */
  async function startOnce(
    type: string,
    workflowId: string,
    args: unknown[],
    reuse?: 'ALLOW_DUPLICATE_FAILED_ONLY' | 'REJECT_DUPLICATE',
    eager = false,
  ) {
    try {
      await client.workflow.start(type, {
        taskQueue,
        workflowId,
        args,
        ...(reuse ? { workflowIdReusePolicy: reuse } : {}),
        ...(eager ? { requestEagerStart: true } : {}),
      });
      return 'started' as const;
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return 'exists' as const;
      throw err;
    }
  }

  return {
    taskQueue,
    paymentWorkflowId,
    fundReturnWorkflowId,

    async ping() {
      await client.connection.workflowService.getSystemInfo({});
    },

    async startPayment(payment: PaymentStart, confirmations: number, opts: { resume?: boolean } = {}) {
      return startOnce(PAYMENT_WORKFLOW, paymentWorkflowId(payment.id), [paymentInput(payment, confirmations, opts)]);
    },

    async paymentWorkflowState(paymentId: string) {
      try {
        const d = await handle(paymentWorkflowId(paymentId)).describe();
        return d.status.name === 'RUNNING' ? 'running' : 'closed';
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return 'not_found';
        throw err;
      }
    },

    async cancelPayment(paymentId: string, request: CancelRequest): Promise<CancelOutcome> {
      try {
        // The deadline bounds every RPC of the update (its admission and the wait for its result).
        return await client.withDeadline(Date.now() + updateTimeoutMs, () =>
          handle(paymentWorkflowId(paymentId)).executeUpdate(cancelUpdate, { args: [request] }),
        );
      } catch (err) {
        const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
        if (cause instanceof ApplicationFailure && cause.type === PAYMENT_NOT_CANCELABLE) {
          return { outcome: 'refused', reasonCode: (cause.details?.[0] as string | undefined) ?? null, message: cause.message };
        }
        if (cause instanceof ApplicationFailure && cause.type === DATA_ERROR) return { outcome: 'not_stored', message: cause.message };
        if (err instanceof WorkflowNotFoundError || isWorkflowClosed(err)) return { outcome: 'closed' };
        // Not answered in time. The update may still run once a worker takes it; a retry then finds
        // the Payment cancelled (a cancel is idempotent in the workflow).
        if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError)
          return { outcome: 'unavailable', retryAfterSeconds: Math.max(1, Math.ceil(updateTimeoutMs / 1000)) };
        throw err;
      }
    },

    async resolvePayment(payment: PaymentStart, confirmations: number, request: ResolutionRequest) {
      await signalPayment(payment, confirmations, resolveSignal, request);
    },

    async transferSeen(payment: PaymentStart, confirmations: number, transfer: TransferSeen) {
      await signalPayment(payment, confirmations, transferDetectedSignal, transfer);
    },

    async advancePaymentClock(payment: PaymentStart, confirmations: number, advance: ClockAdvance) {
      await signalPayment(payment, confirmations, advanceClockSignal, advance);
    },

    async payoutUpdated(payment: PaymentStart, confirmations: number, update: PayoutUpdateSeen) {
      await signalPayment(payment, confirmations, payoutUpdatedSignal, update);
    },

    async startDeposit(start: DepositStart) {
      // Only a failed or terminated run may be started again (it resumes from the stored deposit).
      return startOnce(DEPOSIT_WORKFLOW, depositWorkflowId(start), [depositInput(start)], 'ALLOW_DUPLICATE_FAILED_ONLY');
    },

    async startVaultFunding(fundingOperationId: string, confirmations: number) {
      const input: VaultFundingWorkflowInput = { fundingOperationId, confirmations, pollSeconds: 1, maxChecks: 600 };
      // Never a second run for one operation: a failed one is an operator's case, not a retry.
      return startOnce(VAULT_FUNDING_WORKFLOW, vaultFundingWorkflowId(fundingOperationId), [input], 'REJECT_DUPLICATE');
    },

    async startFundReturn(returnId: string, confirmations: number) {
      // Never a second run for one return: a failed one is asked for again as a new return.
      return startOnce(
        FUND_RETURN_WORKFLOW,
        fundReturnWorkflowId(returnId),
        [fundReturnInput(returnId, confirmations)],
        'REJECT_DUPLICATE',
      );
    },

    async resolveFundReturn(returnId: string, confirmations: number, request: ResolutionRequest) {
      await client.workflow.signalWithStart(FUND_RETURN_WORKFLOW, {
        taskQueue,
        workflowId: fundReturnWorkflowId(returnId),
        args: [fundReturnInput(returnId, confirmations)],
        // Its send only answers once the return is past pending: a second run can't pay twice.
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        signal: resolveFundReturnSignal,
        signalArgs: [request],
      });
    },

    async resolveDeposit(deposit: DepositRef, request: ResolutionRequest) {
      await handle(deposit.workflowId).signal(resolveDepositSignal, request);
    },

    async resolveUnrecordedDeposit(deposit: DepositRef & { start: DepositStart }, request: ResolutionRequest) {
      await client.workflow.signalWithStart(DEPOSIT_WORKFLOW, {
        taskQueue,
        workflowId: deposit.workflowId,
        args: [depositInput(deposit.start)],
        // A run that ended (completed: failed by an operator) is never started again.
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
        signal: resolveDepositSignal,
        signalArgs: [request],
      });
    },

    async chainAdvanced(waiter: ChainWaiter, block: bigint) {
      const workflowId = 'paymentId' in waiter ? paymentWorkflowId(waiter.paymentId) : waiter.depositWorkflowId;
      try {
        await handle(workflowId).signal(chainAdvancedSignal, block.toString());
      } catch (err) {
        // Finished between the query and the signal (or never started): nothing waits any more.
        if (!(err instanceof WorkflowNotFoundError) && !isWorkflowClosed(err)) throw err;
      }
    },

    async reconcileDeposits(input: ReconciliationInput) {
      const startedAt = new Date().toISOString();
      const summary = await client.workflow.execute(DEPOSIT_RECONCILIATION_WORKFLOW, {
        taskQueue,
        workflowId: depositReconciliationWorkflowId(startedAt),
        args: [input],
      });
      return { startedAt, ...(summary as ReconciliationSummary) };
    },

    async runLedgerReconciliation(input: LedgerReconciliationInput = {}) {
      const startedAt = new Date().toISOString();
      const summary = await client.workflow.execute(LEDGER_RECONCILIATION_WORKFLOW, {
        taskQueue,
        workflowId: ledgerReconciliationWorkflowId(startedAt),
        args: [input],
      });
      return { startedAt, ...(summary as LedgerReconciliationSummary) };
    },

    async runPaymentReconciliation(input: PaymentReconciliationInput = {}) {
      const startedAt = new Date().toISOString();
      const summary = await client.workflow.execute(PAYMENT_RECONCILIATION_WORKFLOW, {
        taskQueue,
        workflowId: paymentReconciliationWorkflowId(startedAt),
        args: [input],
      });
      return { startedAt, ...(summary as PaymentReconciliationSummary) };
    },

    async ensureSchedules(schedules: readonly ServiceSchedule[] = SERVICE_SCHEDULES) {
      const outcomes: Array<{ scheduleId: string; outcome: 'created' | 'updated' | 'unchanged' }> = [];
      for (const schedule of schedules) {
        const options = scheduleOptions(schedule, taskQueue);
        try {
          await client.schedule.create(options);
          outcomes.push({ scheduleId: schedule.scheduleId, outcome: 'created' });
          continue;
        } catch (err) {
          if (!(err instanceof ScheduleAlreadyRunning)) throw err;
        }
        const existing = client.schedule.getHandle(schedule.scheduleId);
        if (scheduleMatches(await existing.describe(), schedule, taskQueue)) {
          outcomes.push({ scheduleId: schedule.scheduleId, outcome: 'unchanged' });
          continue;
        }
        // The previous state (an operator's pause and note) is kept; only the definition changes.
        await existing.update((previous) => ({ ...previous, spec: options.spec, action: options.action, policies: options.policies }));
        outcomes.push({ scheduleId: schedule.scheduleId, outcome: 'updated' });
      }
      return outcomes;
    },

    async ensureChainScanners(chainIds: number[], scan: { pollSeconds: number; fromBlock?: string; waitForBlocks?: boolean }) {
      for (const chainId of chainIds) {
        const input: ChainScannerInput = {
          chainId,
          fromBlock: scan.fromBlock ?? '0',
          pollSeconds: scan.pollSeconds,
          ...(scan.waitForBlocks === false ? { waitForBlocks: false } : {}),
        };
        await startOnce(CHAIN_SCANNER_WORKFLOW, chainScannerWorkflowId(chainId), [input]);
      }
    },

    async pokeChainScanner(chainId: number) {
      await signalLongLived(chainScannerWorkflowId(chainId), pokeSignal);
    },

    async rescanChain(chainId: number, fromBlock: bigint) {
      await signalLongLived(chainScannerWorkflowId(chainId), rescanFromSignal, fromBlock.toString());
    },

    async startWebhookDelivery(delivery: WebhookDeliveryStart) {
      const input: WebhookDeliveryInput = {
        deliveryId: delivery.deliveryId,
        round: delivery.round,
        ...(opts.policies?.webhookDelivery?.firstAttemptLocal === false ? { firstAttemptLocal: false } : {}),
      };
      const id = webhookDeliveryWorkflowId(delivery.eventId, delivery.endpointId, delivery.round);
      await startOnce(WEBHOOK_DELIVERY_WORKFLOW, id, [input], 'REJECT_DUPLICATE', opts.eagerWebhookDeliveries === true);
    },

    async ensureWebhookDispatcher(options: Partial<WebhookDispatcherInput> = {}) {
      const input: WebhookDispatcherInput = { ...DEFAULT_WEBHOOK_DISPATCHER, ...options };
      return { started: (await startOnce(WEBHOOK_DISPATCHER_WORKFLOW, WEBHOOK_DISPATCHER_WORKFLOW_ID, [input])) === 'started' };
    },

    async kickWebhookDispatcher() {
      try {
        await handle(WEBHOOK_DISPATCHER_WORKFLOW_ID).signal(webhookDispatcherKickSignal);
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    },

    async dispatchWebhooksNow() {
      return handle(WEBHOOK_DISPATCHER_WORKFLOW_ID).executeUpdate(webhookDispatchNowUpdate);
    },

    async stopWebhookDispatcher(reason: string) {
      try {
        await handle(WEBHOOK_DISPATCHER_WORKFLOW_ID).terminate(reason);
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    },

    async describeWorkflow(workflowId: string) {
      const d = await handle(workflowId).describe();
      return { runId: d.runId, status: d.status.name };
    },

    async listWorkflows(query: string) {
      const found: WorkflowSummary[] = [];
      for await (const w of client.workflow.list({ query })) {
        found.push({ workflowId: w.workflowId, runId: w.runId, type: w.type, status: w.status.name });
      }
      return found;
    },

    async pendingActivities(workflowId: string) {
      const d = await handle(workflowId).describe();
      return (d.raw.pendingActivities ?? []).map((a) => ({
        activityType: a.activityType?.name ?? 'unknown',
        attempt: a.attempt ?? 0,
        lastFailure: a.lastFailure?.message ?? null,
      }));
    },
  };
}

function scheduleOptions(s: ServiceSchedule, taskQueue: string): ScheduleOptions {
  return {
    scheduleId: s.scheduleId,
    spec: { intervals: [{ every: s.every }] },
    action: {
      type: 'startWorkflow',
      workflowType: s.workflowType,
      workflowId: s.workflowId,
      taskQueue,
      args: s.args,
      workflowExecutionTimeout: s.executionTimeout,
    },
    // A pass still running when the next is due: skip that one. After downtime, one catch-up run.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: s.every },
    state: { note: s.description },
  };
}

function scheduleMatches(d: ScheduleDescription, s: ServiceSchedule, taskQueue: string): boolean {
  const intervals = d.spec.intervals ?? [];
  return (
    intervals.length === 1 &&
    intervals[0]!.every === msToNumber(s.every) &&
    (intervals[0]!.offset ?? 0) === 0 &&
    (d.spec.calendars ?? []).length === 0 &&
    d.action.workflowType === s.workflowType &&
    d.action.workflowId === s.workflowId &&
    d.action.taskQueue === taskQueue &&
    JSON.stringify(d.action.args ?? []) === JSON.stringify(s.args) &&
    d.action.workflowExecutionTimeout !== undefined &&
    msToNumber(d.action.workflowExecutionTimeout) === msToNumber(s.executionTimeout) &&
    d.policies.overlap === ScheduleOverlapPolicy.SKIP &&
    d.policies.catchupWindow === msToNumber(s.every)
  );
}

/** An update or signal sent to a workflow that has already completed. */
function isWorkflowClosed(err: unknown): boolean {
  const message = err instanceof Error ? `${err.message} ${(err as { cause?: Error }).cause?.message ?? ''}` : '';
  return /workflow execution already completed|already completed/i.test(message);
}

/** Deadline of a call to Temporal (not a long poll) when the caller names none; TEMPORAL_RPC_TIMEOUT_MS. */
export const DEFAULT_RPC_TIMEOUT_MS = 5000;

/**
 * The gateway on a connection of its own (the API, the CLI); close() ends the connection. Every call
 * but the long polls has a deadline (src/temporal/deadlines.ts), so Temporal being away fails a
 * request within rpcTimeoutMs instead of holding it.
 */
/**
 * While tracing is on, each start, signal and update carries the caller's trace into the workflow's
 * headers; while off, no interceptor, so nothing is added to any history.
 */
function clientTracing(): ClientInterceptors | undefined {
  return tracingStarted() ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined;
}

export async function connectTemporalGateway(
  opts: { address: string; namespace: string; rpcTimeoutMs?: number } & GatewayOptions,
): Promise<TemporalGateway & { close(): Promise<void> }> {
  const connection = await Connection.connect({
    address: opts.address,
    connectTimeout: '10s',
    interceptors: temporalInterceptors(opts.rpcTimeoutMs ?? DEFAULT_RPC_TIMEOUT_MS),
  });
  const client = new Client({ connection, namespace: opts.namespace, interceptors: clientTracing() });
  return Object.assign(createTemporalGateway(client, opts), { close: () => connection.close() });
}

/**
 * The worker's own starter of delivery workflows (its dispatch passes use it): a client on the
 * worker's NativeConnection, so each start asks for eager execution and the server hands the
 * workflow's first task straight back to this worker in the start's answer, instead of queueing it
 * for a poll (the SDK falls back to the queue when the worker has no free slot). Each start has the
 * gateway's deadline, as every other call.
 */
export function workerWebhookStarter(
  connection: NativeConnection,
  opts: { namespace: string; taskQueue: string; rpcTimeoutMs?: number },
): Pick<WebhookEngine, 'startWebhookDelivery'> {
  const gateway = createTemporalGateway(new Client({ connection, namespace: opts.namespace, interceptors: clientTracing() }), {
    taskQueue: opts.taskQueue,
    eagerWebhookDeliveries: true,
  });
  const timeoutMs = opts.rpcTimeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
  return {
    startWebhookDelivery: (delivery) => connection.withDeadline(Date.now() + timeoutMs, () => gateway.startWebhookDelivery(delivery)),
  };
}
