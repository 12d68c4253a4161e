import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks';
import {
  webhookDispatcherKickSignal,
  webhookDispatchNowUpdate,
  type DispatchSummary,
  type WebhookDeliveryInput,
  type WebhookDeliveryResult,
  type WebhookDispatcherInput,
} from './contracts/webhooks';
import { BOUNDED, UNTIL_DONE } from './retry-profiles';
import { runIsLong } from './wait';

// A dispatch pass and an abandonment are idempotent: retried until the database or Temporal is back.
const untilDone = proxyActivities<WebhookActivities>({ ...UNTIL_DONE, startToCloseTimeout: '2m' });
// The HTTP request has a 10 s budget; a retried execution may wait for the first one's claim. Retries
// here are for infrastructure faults only: HTTP outcomes are results, never activity failures.
const bounded = proxyActivities<WebhookActivities>(BOUNDED);
// The first attempt runs in the workflow's first task (a local activity): no activity task to
// schedule, dispatch and report, so a delivery costs the engine one task round trip, not three.
// Same budget and retries as an activity attempt; a worker that dies mid-attempt runs it again, as it
// would an activity (the attempt's claim makes the re-run wait for, or reuse, the first one's record).
const local = proxyLocalActivities<WebhookActivities>({ ...BOUNDED, startToCloseTimeout: '15s' });

/** Passes before the dispatcher continues as new (bounded history: about 10 events per idle pass). */
const PASSES_PER_RUN = 400;

/**
 * The long-running dispatcher (one per namespace, id `webhook-dispatcher`): a loop of dispatch passes.
 * After a pass that drained the outbox it waits for a kick signal, a dispatchNow update, or the poll
 * interval, whichever comes first. Continues as new to bound its history.
 */
export async function webhookDispatcher(input: WebhookDispatcherInput): Promise<void> {
  let requested = false;
  let passesStarted = 0;
  let passesCompleted = 0;
  let lastPassDrained = false;
  let pollArmed = false;
  let pollDue = false;
  const totals: DispatchSummary = { passes: 0, eventsDispatched: 0, deliveriesCreated: 0, deliveriesStarted: 0 };

  setHandler(webhookDispatcherKickSignal, () => {
    requested = true;
  });
  let waitingUpdates = 0;
  setHandler(webhookDispatchNowUpdate, async () => {
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
    // Runs end by history size too: a worker without this run cached replays all of it on every kick.
    const long = i >= PASSES_PER_RUN || runIsLong();
    // Never leave a waiting dispatchNow behind: it is answered by this run's passes.
    if (long && waitingUpdates === 0) break;
    requested = false;
    passesStarted += 1;
    const pass = await untilDone.dispatchWebhookEvents({ batchSize: input.batchSize });
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

/** Guard against a policy bug looping forever; the policy itself stops at 3 attempts. */
const MAX_ATTEMPTS_GUARD = 10;

/**
 * One round of one delivery: attempt, then sleep for the policy's delay, until the delivery succeeds or
 * is abandoned. Attempts are numbered here, so each activity execution knows which attempt it is.
 */
export async function webhookDelivery(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  const firstAttemptLocal = input.firstAttemptLocal !== false;
  const delivery = { deliveryId: input.deliveryId, round: input.round };
  for (let attempt = 1; attempt <= MAX_ATTEMPTS_GUARD; attempt += 1) {
    let report;
    try {
      const attempter = attempt === 1 && firstAttemptLocal ? local : bounded;
      report = await attempter.attemptWebhookDelivery({ ...delivery, attempt, jitter: Math.random() });
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      const type = err.cause instanceof ApplicationFailure ? err.cause.type : undefined;
      await untilDone.abandonWebhookDelivery({ ...delivery, reason: `internal_error: ${type ?? err.cause?.message ?? 'activity failed'}` });
      return { ...delivery, status: 'abandoned', attempts: attempt };
    }
    if (report.step.action === 'retry') {
      await sleep(report.step.delayMs);
      continue;
    }
    return { ...delivery, status: report.step.action, attempts: attempt };
  }
  await untilDone.abandonWebhookDelivery({ ...delivery, reason: 'internal_error: attempt guard reached' });
  return { ...delivery, status: 'abandoned', attempts: MAX_ATTEMPTS_GUARD };
}
