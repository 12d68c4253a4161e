import { after, before } from 'node:test';
import { startAdminApi, type AdminApi } from './admin';
import { startReceiver, type Receiver } from './receiver';
import { uniqueUserId } from '../../support/api-client';
import { getHarness } from '../../support/harness';
import type { AppCredential } from '../../../src/domain/apps/apps';
import { terminateAtRest } from '../../support/engine-clock';
import {
  WEBHOOK_DISPATCHER_WORKFLOW_ID,
  webhookDeliveryWorkflowId,
  type DispatchSummary,
  type WebhookDeliveryResult,
} from '../../../workflows/contracts/webhooks';
import { awaitWorkflowResult } from '../../support/workflow-result';
import { newAccount } from '../../support/fixtures';

/**
 * The dispatcher as the service runs it, with a 30-day poll: tests drive passes with the dispatchNow
 * update, and a far timer stays out of the way of time skipping (skips jump to the nearest timer).
 */
export async function ensureTestDispatcher(): Promise<void> {
  const h = await getHarness();
  await h.engine.ensureWebhookDispatcher({ pollIntervalMs: 30 * 24 * 3_600_000 });
}

/** Runs dispatch passes until everything committed so far has its delivery workflows started. */
export async function dispatch(): Promise<DispatchSummary> {
  const h = await getHarness();
  return h.engine.dispatchWebhooksNow();
}

/** A delivery workflow's result (time skips through its backoff timers). */
export async function delivered(eventId: string, endpointId: string, round = 1): Promise<WebhookDeliveryResult> {
  const h = await getHarness();
  return awaitWorkflowResult(h, webhookDeliveryWorkflowId(eventId, endpointId, round));
}

/** Creates an account through the partner API (emits account.created) and returns it with its event id. */
/** A new account and its account.created event (what a delivery test waits to receive). */
export async function newAccountWithEvent(app: AppCredential, externalUserId = uniqueUserId()) {
  const h = await getHarness();
  const accountId = await newAccount(app, { externalUserId });
  const event = await h.db.prisma.event.findFirstOrThrow({ where: { appId: app.appId, resourceId: accountId, name: 'account.created' } });
  return { accountId, eventId: event.id, externalUserId };
}

/**
 * What a suite that checks signed deliveries needs: the admin API (to add endpoints), a receiver, and
 * the test dispatcher. Registers its own before/after hooks in the calling describe.
 */
/**
 * Ends the shared dispatcher once it rests: terminated with a kicked pass still out, the time-skipping
 * server would keep that task's clock lock for the rest of the shard.
 */
export async function stopTestDispatcher(reason: string): Promise<void> {
  const h = await getHarness();
  const run = await h.engine.describeWorkflow(WEBHOOK_DISPATCHER_WORKFLOW_ID).catch(() => undefined);
  if (run?.status === 'RUNNING') await terminateAtRest(h.env, WEBHOOK_DISPATCHER_WORKFLOW_ID, reason);
}

export function webhookTestbed(): { admin(): AdminApi; receiver(): Receiver } {
  let admin: AdminApi | undefined;
  let receiver: Receiver | undefined;
  before(async () => {
    admin = await startAdminApi({ allowPrivate: true });
    receiver = await startReceiver();
    await ensureTestDispatcher();
  });
  after(async () => {
    await stopTestDispatcher('suite done');
    await admin?.close();
    await receiver?.close();
  });
  return { admin: () => admin!, receiver: () => receiver! };
}
