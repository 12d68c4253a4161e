import { z } from 'zod';
import { EVENT_NAMES, type EventName } from './event-catalog';
import { ZCursor } from '../requests/pagination';
import { zInt4Param } from '../../platform/int4';

export const ZEventId = z
  .string()
  .regex(/^evt_[A-Za-z0-9_-]+$/, 'an event id (evt_...)')
  .max(64);

export const ZEventPath = z.object({ eventId: ZEventId });

const ZIsoDate = z.iso.datetime();

export const ZListEventsQuery = z.strictObject({
  limit: zInt4Param({ min: 1, max: 100 }).default(20),
  cursor: ZCursor.optional(),
  name: z
    .enum(EVENT_NAMES as [EventName, ...EventName[]])
    .optional()
    .meta({ description: 'One event name from the catalog.' }),
  resourceId: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, 'a resource id (acct_..., payment_..., dep_...)')
    .max(128)
    .optional()
    .meta({ description: 'The id of the resource the events are about: an account, Payment, deposit or vault.' }),
  createdFrom: ZIsoDate.optional().meta({ description: 'Events created at or after this time.' }),
  createdTo: ZIsoDate.optional().meta({ description: 'Events created before this time.' }),
});
export type TListEventsQuery = z.output<typeof ZListEventsQuery>;

export const EVENT_RESOURCE_TYPES = ['account', 'payment', 'deposit', 'vault'] as const;

/**
 * An event as a webhook delivers it (id, name, apiVersion, createdAt, resourceSequence, payload: the same bytes' fields),
 * with what it is about: a consumer that missed a delivery reads here what the envelope said.
 */
export const ZEvent = z.strictObject({
  id: ZEventId,
  name: z.string().meta({ description: 'An event name from the catalog; consumers ignore names they do not know.' }),
  apiVersion: z.string(),
  createdAt: ZIsoDate,
  resourceSequence: z.number().int().positive().meta({
    description: 'Its place among the events of its resource (1, 2, 3... as the changes committed): order out-of-order deliveries by it.',
  }),
  payload: z.record(z.string(), z.unknown()),
  resourceType: z.enum(EVENT_RESOURCE_TYPES),
  resourceId: z.string(),
  accountId: z.string().nullable().meta({ description: 'The account the event belongs to; null for a public wallet Payment.' }),
});
export type TEvent = z.infer<typeof ZEvent>;

export const ZEventList = z.strictObject({
  data: z.array(ZEvent),
  nextCursor: z.string().optional(),
});
export type TEventList = z.infer<typeof ZEventList>;
