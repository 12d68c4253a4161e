import { z } from 'zod';
import { ZCursor } from '../requests/pagination';
import { zInt4Param } from '../../platform/int4';
import { EVENT_NAMES, type EventName } from '../event-log/event-catalog';

const KNOWN_EVENTS = new Set<string>(EVENT_NAMES);

export const WEBHOOK_LIMITS = { urlMaxChars: 2048, descriptionMaxChars: 512, maxEvents: 100 } as const;

export const ZWebhookEndpointId = z
  .string()
  .regex(/^whe_[A-Za-z0-9]+$/, 'a webhook endpoint id (whe_...)')
  .max(64);
export const ZWebhookDeliveryId = z
  .string()
  .regex(/^dlv_[A-Za-z0-9]+$/, 'a webhook delivery id (dlv_...)')
  .max(64);
export const ZAppId = z
  .string()
  .regex(/^app_[A-Za-z0-9]+$/, 'an app id (app_...)')
  .max(64);

/** Catalog names only; duplicates are dropped (first occurrence kept). An empty list means every event. */
export const ZEventSubscription = z
  .array(z.string().refine((name) => KNOWN_EVENTS.has(name), { message: 'not an event name from the catalog' }))
  .max(WEBHOOK_LIMITS.maxEvents)
  .transform((names) => [...new Set(names)] as EventName[]);

export const ZWebhookDescription = z.string().max(WEBHOOK_LIMITS.descriptionMaxChars);

export const ZCreateWebhookEndpoint = z.strictObject({
  url: z.string().min(1).max(WEBHOOK_LIMITS.urlMaxChars),
  description: ZWebhookDescription.nullable().optional(),
  events: ZEventSubscription.default([]),
});
export type TCreateWebhookEndpoint = z.output<typeof ZCreateWebhookEndpoint>;

/** What can change after creation: description and events. The URL is immutable. */
export const ZUpdateWebhookEndpoint = z
  .strictObject({
    description: ZWebhookDescription.nullable().optional(),
    events: ZEventSubscription.optional(),
  })
  .refine((v) => v.description !== undefined || v.events !== undefined, { message: 'nothing to update: send description and/or events' });
export type TUpdateWebhookEndpoint = z.output<typeof ZUpdateWebhookEndpoint>;

export const WEBHOOK_ENDPOINT_STATUSES = ['enabled', 'disabled', 'archived'] as const;
export type WebhookEndpointStatus = (typeof WEBHOOK_ENDPOINT_STATUSES)[number];

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'abandoned'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

export const ZListWebhookDeliveries = z.strictObject({
  endpointId: ZWebhookEndpointId.optional(),
  status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional(),
  limit: zInt4Param({ min: 1, max: 100 }).default(50),
  cursor: ZCursor.optional(),
});
export type TListWebhookDeliveries = z.output<typeof ZListWebhookDeliveries>;

/** How far back a recovery reaches: the event log keeps at least this much. */
export const RECOVERY_WINDOW_DAYS = 90;

export const ZRecoverWebhookEndpoint = z.strictObject({
  since: z.iso
    .datetime()
    .meta({ description: `Re-deliver the missed events created at or after this time (at most ${RECOVERY_WINDOW_DAYS} days back).` }),
});

/** An endpoint as the CLI and the admin API show it. The signing secret is never part of it. */
export interface WebhookEndpointView {
  id: string;
  appId: string;
  url: string;
  description: string | null;
  /** The subscribed event names; empty means every event. */
  events: EventName[];
  allEvents: boolean;
  status: WebhookEndpointStatus;
  secretVersion: number;
  secretRotatedAt: string | null;
  archivedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookDeliveryView {
  id: string;
  appId: string;
  eventId: string;
  eventName: string;
  endpointId: string;
  status: WebhookDeliveryStatus;
  round: number;
  attemptCount: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  completedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookAttemptView {
  deliveryId: string;
  round: number;
  attempt: number;
  state: 'sending' | 'completed';
  url: string;
  startedAt: string;
  completedAt: string | null;
  responseStatus: number | null;
  latencyMs: number | null;
  responseBody: string | null;
  error: string | null;
  outcome: 'succeeded' | 'retry' | 'abandoned' | null;
  nextDelayMs: number | null;
}
