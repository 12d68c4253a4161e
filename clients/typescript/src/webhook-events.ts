import type { WebhookEnvelope } from './verify';

/** Every event name of the catalog when this client was generated; new names appear over time. */
export const WEBHOOK_EVENT_NAMES = [
  'account.created',
  'account.updated',
  'deposit.detected',
  'deposit.settled',
  'deposit.failed',
  'deposit.requires_intervention',
  'deposit.reversed',
  'bank_funding.completed',
  'bank_funding.failed',
  'payment.created',
  'payment.requires_action',
  'payment.processing',
  'payment.accepted',
  'payment.refund_pending',
  'payment.partially_refunded',
  'payment.refunded',
  'payment.succeeded',
  'payment.failed',
  'payment.cancelled',
  'payment.expired',
  'payment.requires_intervention',
  'payment.duplicate_received',
  'payment.late_received',
  'payment.settlement_returned',
  'kyc.session_created',
  'kyc.updated',
  'partner_kyc.requires_information',
  'partner_kyc.information_submitted',
  'partner_kyc.ready_to_submit',
  'partner_kyc.submitted',
  'partner_kyc.approved',
  'partner_kyc.rejected',
  'offramp_partner_account.linked',
  'compliance.action_required',
  'compliance.submitted',
  'compliance.approved',
  'compliance.rejected',
  'compliance.requires_intervention',
  'vault.policy_active',
  'vault.failed',
  'vault.funding_posted',
  'vault.funding_requires_intervention',
  'vault.yield_supply_settled',
  'vault.yield_supply_failed',
  'smart_wallet.active',
  'smart_wallet.deployment_failed',
  'smart_wallet.requires_intervention',
  'sandbox.clock_advanced',
] as const;

export type WebhookEventName = (typeof WEBHOOK_EVENT_NAMES)[number];

type Extra = Record<string, unknown>;

/** A Payment's state after the change (public wallet Payments carry no accountId). */
export interface PaymentEventPayload extends Extra {
  paymentId: string;
  accountId?: string;
  status: string;
  statusVersion: number;
  operationalState: string;
  operationalReasonCode: string | null;
  offrampStatus?: string | null;
}

/** bank_funding.*: the Payment's state, and the fiat leg to the bank account. */
export interface BankFundingEventPayload extends PaymentEventPayload {
  bankAccountId: string;
  destinationAmount: string;
  destinationCurrency: string;
  reasonCode: string | null;
}

export interface DepositEventPayload extends Extra {
  depositId: string;
  accountId: string;
  depositAddressId: string;
  status: string;
  statusVersion: number;
}

export interface AccountEventPayload extends Extra {
  accountId: string;
}

export interface VaultEventPayload extends Extra {
  accountId?: string;
  vaultId?: string;
}

type PayloadOf<N extends WebhookEventName> = N extends `payment.${string}`
  ? PaymentEventPayload
  : N extends `bank_funding.${string}`
    ? BankFundingEventPayload
    : N extends `deposit.${string}`
      ? DepositEventPayload
      : N extends `account.${string}`
        ? AccountEventPayload
        : N extends `vault.${string}`
          ? VaultEventPayload
          : Extra;

/** A delivery of a catalog event, narrowed by `name`: `if (event.name === 'payment.succeeded') event.payload.paymentId`. */
export type WebhookEvent = { [N in WebhookEventName]: Omit<WebhookEnvelope<PayloadOf<N>>, 'name'> & { name: N } }[WebhookEventName];

/** What a receiver gets: a catalog event, or a name added after this client (ignore it). */
export type AnyWebhookEvent = WebhookEvent | WebhookEnvelope;

export function isKnownEvent(event: AnyWebhookEvent): event is WebhookEvent {
  return (WEBHOOK_EVENT_NAMES as readonly string[]).includes(event.name);
}
