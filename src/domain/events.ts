import type { Prisma } from '../db/client';
import type { TEventName } from './event-catalog';
import { newId } from './ids';

export interface NewEvent {
  appId: string;
  name: TEventName;
  apiVersion: string;
  accountId: string | null;
  resourceType: 'account' | 'payment' | 'deposit';
  resourceId: string;
  payload: Record<string, unknown>;
}

/**
 * Writes an event row. Always called inside the transaction that makes the state change, so an event
 * exists if and only if its change committed (the webhook dispatcher reads these rows).
 */
export async function recordEvent(tx: Prisma.TransactionClient, event: NewEvent): Promise<string> {
  const id = newId('event');
  await tx.event.create({
    data: { id, ...event, payload: event.payload as Prisma.InputJsonValue },
  });
  return id;
}
