import type { Payment } from '../../generated/prisma/client';
import type { EventSubject } from '../event-log/events';

/** Who made a Payment: the partner (POST /v2/payments) or an anonymous payer (public creation). */
export const PAYMENT_ORIGINS = ['partner', 'public'] as const;
export type PaymentOrigin = (typeof PAYMENT_ORIGINS)[number];

type Subjectable = Pick<Payment, 'appId' | 'apiVersion' | 'recipientAccountId' | 'id' | 'origin'>;

/**
 * The account id a Payment's events name: none for a public wallet Payment (spec, Events: "public
 * wallet Payments carry no account id in payload or headers"; the webhook's x-svc-account-id comes
 * from the event row's account). The partner still reads the recipient through GET /v2/payments.
 */
export function eventAccountId(p: Pick<Payment, 'recipientAccountId' | 'origin'>): string | null {
  return p.origin === 'public' ? null : p.recipientAccountId;
}

/** The one subject every Payment event is written under. */
export function paymentSubject(p: Subjectable): EventSubject {
  return { appId: p.appId, apiVersion: p.apiVersion, accountId: eventAccountId(p), resourceType: 'payment', resourceId: p.id };
}

/** A Payment event's payload opening: the Payment, and its recipient account unless it is public. */
export function paymentEventIds(p: Pick<Payment, 'id' | 'recipientAccountId' | 'origin'>): { paymentId: string; accountId?: string } {
  const accountId = eventAccountId(p);
  return accountId === null ? { paymentId: p.id } : { paymentId: p.id, accountId };
}
