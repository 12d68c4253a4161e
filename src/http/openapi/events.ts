import { ZEvent, ZEventList, ZEventPath, ZListEventsQuery } from '../../domain/event-log/event-log.schemas';
import { ACCOUNT_ID, EXAMPLE, PAYMENT_ID } from './examples';
import { operation, type OpenApiPaths } from './operation';

/** src/http/routes/events.ts */
const common = { tags: ['Events'], auth: 'app' } as const;
// Not a module of its own: the log is there whatever the app has enabled.
const withoutErrors = [424];

const SCOPES_NOTE =
  'A credential reads the events of the resources its scopes read: account events with `v2:accounts`, Payment events with `v2:payments`, deposit events with `v2:deposit_addresses`, vault events with `v2:vaults`.';

const eventExample = {
  id: 'evt_3f1c9a0b7d2e4f6a8b0c1d2e',
  name: 'payment.cancelled',
  apiVersion: '2026-09-09',
  createdAt: EXAMPLE.AT,
  resourceSequence: 2,
  payload: {
    paymentId: PAYMENT_ID,
    accountId: ACCOUNT_ID,
    status: 'cancelled',
    statusVersion: 2,
    operationalState: 'normal',
    operationalReasonCode: null,
  },
  resourceType: 'payment',
  resourceId: PAYMENT_ID,
  accountId: ACCOUNT_ID,
};

export const eventPaths: OpenApiPaths = {
  '/v2/events': {
    get: operation({
      ...common,
      withoutErrors,
      operationId: 'listEvents',
      summary: 'List events, newest first (filter by name, resource id, creation time)',
      description: `Every event the app's webhooks were sent, kept at least 90 days: a consumer whose receiver missed deliveries reads them here. ${SCOPES_NOTE}`,
      query: ZListEventsQuery,
      responses: { 200: { description: 'A page of events.', schema: ZEventList, example: { data: [eventExample] } } },
    }),
  },
  '/v2/events/{eventId}': {
    get: operation({
      ...common,
      withoutErrors,
      operationId: 'getEvent',
      summary: 'Get an event',
      description: `The event as its webhook envelope carried it (id, name, apiVersion, createdAt, resourceSequence, payload), with the resource it is about. ${SCOPES_NOTE}`,
      path: ZEventPath,
      errors: [403],
      responses: { 200: { description: 'The event.', schema: ZEvent, example: eventExample } },
    }),
  },
};
