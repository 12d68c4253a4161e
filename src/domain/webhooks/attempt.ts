import { setTimeout as delay } from 'node:timers/promises';
import { Prisma, type PrismaClient } from '../../db/client';
import type { Logger } from '../../logger';
import type { DestinationPolicy } from '../../webhooks/destination';
import { postWebhook, type PostResult } from '../../webhooks/http-post';
import { parseRetryAfter, planNextStep, type AttemptOutcome, type NextStep } from './policy';
import { decryptSigningSecret, signatureHeader, signDelivery } from './signing-secrets';
import type { ServiceSecret } from '../keys/service-keys';

/**
 * One attempt of one delivery round: sign and POST the event to the endpoint, then record the attempt
 * and the delivery's new state in one transaction. The attempt number comes from the workflow, and the
 * attempt row (delivery, round, attempt) is claimed before sending, so a retried activity returns the
 * recorded result instead of sending again, unless the first execution died mid-send (then it sends:
 * at-least-once).
 */
export interface WebhookAttemptDeps {
  prisma: PrismaClient;
  logger: Logger;
  serviceSecret: ServiceSecret;
  destinations: DestinationPolicy;
  http: { timeoutMs: number; maxResponseBytes: number };
  /**
   * Tests only: the waits after failed attempts 1 and 2, read at each attempt (default
   * WEBHOOK_RETRY_POLICY.backoffMs). A suite sharing one engine can't always skip 5 minutes quickly.
   */
  retryBackoffMs?: () => readonly number[];
}

export interface AttemptInput {
  deliveryId: string;
  round: number;
  attempt: number;
  /** In [0, 1), chosen by the workflow: the backoff jitter. */
  jitter: number;
}

export interface AttemptReport {
  step: NextStep;
  responseStatus: number | null;
}

export class DeliveryGoneError extends Error {
  override name = 'DeliveryGoneError';
}

/** Stored response bodies are cut to this many characters. */
export const STORED_RESPONSE_BODY_CHARS = 2048;
/** A claim older than this (request timeout plus margin) belongs to an execution that died. */
const claimTtlMs = (deps: WebhookAttemptDeps) => deps.http.timeoutMs + 5_000;

const USER_AGENT = 'PartnerPayments-Webhooks/1.0';

function stepOf(row: { outcome: string | null; nextDelayMs: number | null; error: string | null }): NextStep {
  if (row.outcome === 'succeeded') return { action: 'succeeded' };
  if (row.outcome === 'retry') return { action: 'retry', delayMs: row.nextDelayMs ?? 0 };
  const reason = (row.error ?? '').split(':')[0] as Extract<NextStep, { action: 'abandoned' }>['reason'];
  return { action: 'abandoned', reason: reason || 'internal_error' };
}

type Claim = { kind: 'claimed' } | { kind: 'completed'; report: AttemptReport };

async function claimAttempt(deps: WebhookAttemptDeps, input: AttemptInput, url: string): Promise<Claim> {
  const key = { deliveryId: input.deliveryId, round: input.round, attempt: input.attempt };
  for (;;) {
    const existing = await deps.prisma.webhookAttempt.findUnique({ where: { deliveryId_round_attempt: key } });
    if (!existing) {
      try {
        await deps.prisma.webhookAttempt.create({ data: { ...key, state: 'sending', url, claimedAt: new Date() } });
        return { kind: 'claimed' };
      } catch (err) {
        if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') continue;
        throw err;
      }
    }
    if (existing.state === 'completed') {
      return { kind: 'completed', report: { step: stepOf(existing), responseStatus: existing.responseStatus } };
    }
    // Another execution of this very attempt is sending, or died while sending.
    if (Date.now() - existing.claimedAt.getTime() < claimTtlMs(deps)) {
      await delay(200);
      continue;
    }
    const taken = await deps.prisma.webhookAttempt.updateMany({
      where: { ...key, state: 'sending', claimedAt: existing.claimedAt },
      data: { claimedAt: new Date() },
    });
    if (taken.count === 1) return { kind: 'claimed' };
  }
}

function outcomeOf(result: PostResult): AttemptOutcome {
  switch (result.kind) {
    case 'response': {
      const header = result.headers['retry-after'];
      const retryAfterMs = parseRetryAfter(Array.isArray(header) ? header[0] : header, Date.now());
      return { kind: 'response', status: result.status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
    }
    case 'timeout':
      return { kind: 'timeout' };
    case 'connection_error':
      return { kind: 'connection_error' };
    case 'destination_not_allowed':
      return { kind: 'refused', reason: 'destination_not_allowed' };
  }
}

type DeliveryRow = Prisma.WebhookDeliveryGetPayload<{ include: { endpoint: true; event: true } }>;

/** The delivery with its endpoint and event, in the round the workflow runs; else it is gone. */
async function loadDelivery(prisma: PrismaClient, input: AttemptInput): Promise<DeliveryRow> {
  const delivery = await prisma.webhookDelivery.findUnique({
    where: { id: input.deliveryId },
    include: { endpoint: true, event: true },
  });
  if (!delivery) throw new DeliveryGoneError(`webhook delivery ${input.deliveryId} does not exist`);
  if (delivery.round !== input.round) {
    throw new DeliveryGoneError(`webhook delivery ${input.deliveryId} is in round ${delivery.round}, not ${input.round}`);
  }
  return delivery;
}

/** What one attempt came to, as its row records it. */
interface Sent {
  outcome: AttemptOutcome;
  responseStatus: number | null;
  responseBody: string | null;
  latencyMs: number | null;
  error: string | null;
}

/** The signed body: the event as the endpoint receives it. */
function deliveryBody(event: DeliveryRow['event']): Buffer {
  return Buffer.from(
    JSON.stringify({
      id: event.id,
      name: event.name,
      apiVersion: event.apiVersion,
      createdAt: event.createdAt.toISOString(),
      resourceSequence: Number(event.resourceSequence),
      payload: event.payload,
    }),
    'utf8',
  );
}

/** The request's headers, signed now over the body under the endpoint's secret. */
function deliveryHeaders(
  delivery: DeliveryRow,
  account: { externalUserId: string } | null,
  secret: string,
  rawBody: Buffer,
): Record<string, string> {
  const { event } = delivery;
  const timestamp = Math.floor(Date.now() / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-svc-event': event.name,
    'x-svc-event-id': event.id,
    'x-svc-delivery': delivery.id,
    ...(event.accountId ? { 'x-svc-account-id': event.accountId } : {}),
    ...(account ? { 'x-svc-external-user-id': encodeURIComponent(account.externalUserId) } : {}),
    'x-svc-timestamp': String(timestamp),
    'x-svc-signature': signatureHeader(timestamp, signDelivery(secret, timestamp, delivery.id, event.id, rawBody)),
  };
}

function sentOf(result: PostResult): Sent {
  const sent = { outcome: outcomeOf(result), latencyMs: result.latencyMs };
  return result.kind === 'response'
    ? { ...sent, responseStatus: result.status, responseBody: result.body.slice(0, STORED_RESPONSE_BODY_CHARS), error: null }
    : { ...sent, responseStatus: null, responseBody: null, error: result.error };
}

/** POSTs the signed event to the endpoint; an endpoint not enabled is refused without a request. */
async function send(deps: WebhookAttemptDeps, delivery: DeliveryRow, secret: string): Promise<Sent> {
  const { endpoint, event } = delivery;
  if (endpoint.status !== 'enabled') {
    return {
      outcome: { kind: 'refused', reason: endpoint.status === 'archived' ? 'endpoint_archived' : 'endpoint_disabled' },
      responseStatus: null,
      responseBody: null,
      latencyMs: null,
      error: `not sent: the endpoint is ${endpoint.status}`,
    };
  }
  const rawBody = deliveryBody(event);
  const account = event.accountId
    ? await deps.prisma.account.findUnique({ where: { id: event.accountId }, select: { externalUserId: true } })
    : null;
  const result = await postWebhook(endpoint.url, deliveryHeaders(delivery, account, secret, rawBody), rawBody, {
    policy: deps.destinations,
    timeoutMs: deps.http.timeoutMs,
    maxResponseBytes: deps.http.maxResponseBytes,
  });
  return sentOf(result);
}

/** Completes the attempt row and moves the delivery on, in one transaction, unless another execution recorded it first. */
async function recordAttempt(prisma: PrismaClient, deliveryId: string, input: AttemptInput, step: NextStep, sent: Sent): Promise<void> {
  const { responseStatus, error } = sent;
  const detail = error ?? (responseStatus !== null ? `HTTP ${responseStatus}` : null);
  const now = new Date();
  await prisma.$transaction(async (tx) => {
    const recorded = await tx.webhookAttempt.updateMany({
      where: { deliveryId, round: input.round, attempt: input.attempt, state: 'sending' },
      data: {
        state: 'completed',
        responseStatus,
        responseBody: sent.responseBody,
        latencyMs: sent.latencyMs,
        error: step.action === 'abandoned' ? `${step.reason}: ${detail ?? ''}`.trim() : error,
        outcome: step.action,
        nextDelayMs: step.action === 'retry' ? step.delayMs : null,
        completedAt: now,
      },
    });
    if (recorded.count === 0) return; // another execution recorded this attempt first
    await tx.webhookDelivery.updateMany({
      where: { id: deliveryId, round: input.round },
      data: {
        status: step.action === 'retry' ? 'retrying' : step.action,
        attemptCount: { increment: 1 },
        lastStatusCode: responseStatus,
        lastError: step.action === 'succeeded' ? null : step.action === 'abandoned' ? `${step.reason}: ${detail ?? ''}`.trim() : detail,
        nextAttemptAt: step.action === 'retry' ? new Date(now.getTime() + step.delayMs) : null,
        completedAt: step.action === 'retry' ? null : now,
      },
    });
  });
}

export async function attemptDelivery(deps: WebhookAttemptDeps, input: AttemptInput): Promise<AttemptReport> {
  const delivery = await loadDelivery(deps.prisma, input);
  const { endpoint, event } = delivery;
  // Before claiming: an unreadable secret (SERVICE_SECRET changed) fails the round without a stuck claim.
  const secret = endpoint.status === 'enabled' ? decryptSigningSecret(deps.serviceSecret, endpoint.id, endpoint.secretCiphertext) : '';

  const claim = await claimAttempt(deps, input, endpoint.url);
  if (claim.kind === 'completed') return claim.report;

  const sent = await send(deps, delivery, secret);
  const step = planNextStep(sent.outcome, input.attempt, input.jitter, deps.retryBackoffMs?.());
  await recordAttempt(deps.prisma, delivery.id, input, step, sent);
  deps.logger.info(
    {
      deliveryId: delivery.id,
      eventId: event.id,
      endpointId: endpoint.id,
      round: input.round,
      attempt: input.attempt,
      responseStatus: sent.responseStatus,
      latencyMs: sent.latencyMs,
      next: step.action,
    },
    'webhook attempt',
  );
  return { step, responseStatus: sent.responseStatus };
}

/** Ends a round whose attempts could not run at all (e.g. the activity kept failing): never silent. */
export async function abandonDelivery(prisma: PrismaClient, input: { deliveryId: string; round: number; reason: string }): Promise<void> {
  await prisma.webhookDelivery.updateMany({
    where: { id: input.deliveryId, round: input.round, status: { in: ['pending', 'retrying'] } },
    data: { status: 'abandoned', lastError: input.reason.slice(0, 1000), nextAttemptAt: null, completedAt: new Date() },
  });
}
