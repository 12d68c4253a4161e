import { createHash } from 'node:crypto';
import type { Prisma } from '../../db/client';
import type { EventName } from './event-catalog';

/** The resource an event is about, and whose app and account it belongs to. */
export interface EventSubject {
  appId: string;
  apiVersion: string;
  accountId: string | null;
  resourceType: 'account' | 'payment' | 'deposit' | 'vault';
  resourceId: string;
}

export interface NewEvent {
  name: EventName;
  payload: Record<string, unknown>;
}

/**
 * The one event writer. Called inside the transaction that makes the state change, so an event
 * exists if and only if its change committed (the webhook dispatcher reads these rows). `step` names
 * the change (e.g. a statusVersion); ids derive from (resource, step, position, name), so a retried
 * step writes nothing twice.
 */
export async function writeEvents(
  tx: Prisma.TransactionClient,
  subject: EventSubject,
  step: string,
  events: NewEvent[],
): Promise<string[]> {
  const rows = eventRows(subject, step, events);
  if (rows.length > 0) await tx.event.createMany({ data: rows, skipDuplicates: true });
  return rows.map((r) => r.id);
}

/** The rows writeEvents inserts (insert them with skipDuplicates), for a caller that batches its transaction. */
export function eventRows(subject: EventSubject, step: string, events: NewEvent[]) {
  // Wall time of the commit, not a workflow's clock: events order as the changes committed.
  const createdAt = new Date();
  return events.map((e, i) => ({
    id: eventId(subject, step, i, e.name),
    ...subject,
    name: e.name,
    payload: e.payload as Prisma.InputJsonValue,
    createdAt,
  }));
}

export function eventId(subject: EventSubject, step: string, index: number, name: string): string {
  const digest = createHash('sha256')
    .update([subject.resourceType, subject.resourceId, step, String(index), name].join('|'))
    .digest('hex');
  return `evt_${digest.slice(0, 24)}`;
}
