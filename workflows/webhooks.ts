import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  defineSignal,
  defineUpdate,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks';
import {
  WEBHOOK_DISPATCH_NOW_UPDATE,
  WEBHOOK_DISPATCHER_KICK_SIGNAL,
  type TDispatchSummary,
  type TWebhookDeliveryInput,
  type TWebhookDeliveryResult,
  type TWebhookDispatcherInput,
} from '../src/domain/webhooks/workflow-names';

export const webhookDispatcherKick = defineSignal(WEBHOOK_DISPATCHER_KICK_SIGNAL);
export const webhookDispatchNow = defineUpdate<TDispatchSummary>(WEBHOOK_DISPATCH_NOW_UPDATE);

const dispatcherActivities = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '2m',
  // A pass is idempotent; retry until the database or Temporal is back.
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

/** Passes before the dispatcher continues as new (bounded history: about 10 events per idle pass). */
const PASSES_PER_RUN = 400;

/**
 * The long-running dispatcher (one per namespace, id `webhook-dispatcher`): a loop of dispatch passes.
 * After a pass that drained the outbox it waits for a kick signal, a dispatchNow update, or the poll
 * interval, whichever comes first. Continues as new to bound its history.
 */
export async function webhookDispatcher(input: TWebhookDispatcherInput): Promise<void> {
  let requested = false;
  let passesStarted = 0;
  let passesCompleted = 0;
  let lastPassDrained = false;
  let pollArmed = false;
  let pollDue = false;
  const totals: TDispatchSummary = { passes: 0, eventsDispatched: 0, deliveriesCreated: 0, deliveriesStarted: 0 };

  setHandler(webhookDispatcherKick, () => {
    requested = true;
  });
  let waitingUpdates = 0;
  setHandler(webhookDispatchNow, async () => {
    requested = true;
    waitingUpdates += 1;
    const before = { ...totals };
    // Only a pass that starts after this update sees what was committed before it.
    const firstPass = passesStarted + 1;
    try {
      await condition(() => passesCompleted >= firstPass && lastPassDrained);
    } finally {
      waitingUpdates -= 1;
    }
    return {
      passes: totals.passes - before.passes,
      eventsDispatched: totals.eventsDispatched - before.eventsDispatched,
      deliveriesCreated: totals.deliveriesCreated - before.deliveriesCreated,
      deliveriesStarted: totals.deliveriesStarted - before.deliveriesStarted,
    };
  });

  for (let i = 0; ; i += 1) {
    const runIsLong = i >= PASSES_PER_RUN || workflowInfo().continueAsNewSuggested;
    // Never leave a waiting dispatchNow behind: it is answered by this run's passes.
    if (runIsLong && waitingUpdates === 0) break;
    requested = false;
    passesStarted += 1;
    const pass = await dispatcherActivities.dispatchWebhookEvents({ batchSize: input.batchSize });
    totals.passes += 1;
    totals.eventsDispatched += pass.eventsDispatched;
    totals.deliveriesCreated += pass.deliveriesCreated;
    totals.deliveriesStarted += pass.deliveriesStarted;
    lastPassDrained = !pass.more;
    passesCompleted += 1;
    if (pass.more) continue;
    // The poll timer is never cancelled: a kick wakes the loop, the timer stays armed and fires later
    // (at worst one extra, empty pass). Cancelling a timer that is firing at the same moment trips
    // Temporal's Java test server ("invalid history builder state") under time skipping.
    if (!pollArmed) {
      pollArmed = true;
      void sleep(input.pollIntervalMs).then(() => {
        pollArmed = false;
        pollDue = true;
      });
    }
    await condition(() => requested || pollDue);
    pollDue = false;
  }
  await condition(allHandlersFinished);
  await continueAsNew<typeof webhookDispatcher>(input);
}

const deliveryActivities = proxyActivities<WebhookActivities>({
  // The HTTP request has a 10 s budget; a retried execution may wait for the first one's claim.
  startToCloseTimeout: '1m',
  // Retries here are for infrastructure faults only (database down, worker lost): HTTP outcomes are
  // results, never activity failures. Attempt rows make a retried execution idempotent.
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 8 },
});

const abandonActivities = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

/** Guard against a policy bug looping forever; the policy itself stops at 3 attempts. */
const MAX_ATTEMPTS_GUARD = 10;

/**
 * One round of one delivery: attempt, then sleep for the policy's delay, until the delivery succeeds or
 * is abandoned. Attempts are numbered here, so each activity execution knows which attempt it is.
 */
export async function webhookDelivery(input: TWebhookDeliveryInput): Promise<TWebhookDeliveryResult> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS_GUARD; attempt += 1) {
    let report;
    try {
      report = await deliveryActivities.attemptWebhookDelivery({ ...input, attempt, jitter: Math.random() });
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      const type = err.cause instanceof ApplicationFailure ? err.cause.type : undefined;
      await abandonActivities.abandonWebhookDelivery({ ...input, reason: `internal_error: ${type ?? err.cause?.message ?? 'activity failed'}` });
      return { ...input, status: 'abandoned', attempts: attempt };
    }
    if (report.step.action === 'retry') {
      await sleep(report.step.delayMs);
      continue;
    }
    return { ...input, status: report.step.action, attempts: attempt };
  }
  await abandonActivities.abandonWebhookDelivery({ ...input, reason: 'internal_error: attempt guard reached' });
  return { ...input, status: 'abandoned', attempts: MAX_ATTEMPTS_GUARD };
}
