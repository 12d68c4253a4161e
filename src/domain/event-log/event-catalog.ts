/** The spec's event catalog, by group. New names are added over time; consumers ignore unknown ones. */
export const EVENT_GROUPS = [
  { id: 'accounts', label: 'Accounts', events: ['account.created', 'account.updated'] },
  {
    id: 'deposits',
    label: 'Deposits',
    events: ['deposit.detected', 'deposit.settled', 'deposit.failed', 'deposit.requires_intervention', 'deposit.reversed'],
  },
  { id: 'bank_funding', label: 'Bank funding', events: ['bank_funding.completed', 'bank_funding.failed'] },
  {
    id: 'payments',
    label: 'Payments',
    events: [
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
    ],
  },
  {
    id: 'kyc',
    label: 'KYC',
    events: [
      'kyc.session_created',
      'kyc.updated',
      'partner_kyc.requires_information',
      'partner_kyc.information_submitted',
      'partner_kyc.ready_to_submit',
      'partner_kyc.submitted',
      'partner_kyc.approved',
      'partner_kyc.rejected',
      'offramp_partner_account.linked',
    ],
  },
  {
    id: 'compliance',
    label: 'Compliance',
    events: [
      'compliance.action_required',
      'compliance.submitted',
      'compliance.approved',
      'compliance.rejected',
      'compliance.requires_intervention',
    ],
  },
  {
    id: 'vaults',
    label: 'Vaults',
    events: [
      'vault.policy_active',
      'vault.failed',
      'vault.funding_posted',
      'vault.funding_requires_intervention',
      'vault.yield_supply_settled',
      'vault.yield_supply_failed',
    ],
  },
  {
    id: 'smart_wallets',
    label: 'Smart wallets',
    events: ['smart_wallet.active', 'smart_wallet.deployment_failed', 'smart_wallet.requires_intervention'],
  },
  // Not in the spec's catalog: a sandbox app moved a resource's clock (docs/decisions/sandbox-clock.md).
  { id: 'sandbox', label: 'Sandbox', events: ['sandbox.clock_advanced'] },
] as const;

export type EventName = (typeof EVENT_GROUPS)[number]['events'][number];

export const EVENT_NAMES: readonly EventName[] = EVENT_GROUPS.flatMap((g) => [...g.events]);

const NOT_RECOMMENDED_GROUPS = new Set(['kyc', 'vaults', 'smart_wallets', 'sandbox']);
const NOT_RECOMMENDED_EVENTS = new Set(['payment.created', 'payment.requires_action', 'deposit.failed', 'compliance.submitted']);

/** The spec's recommended subset: everything except the listed events and groups. */
export const RECOMMENDED_EVENTS: readonly EventName[] = EVENT_GROUPS.flatMap((g) =>
  NOT_RECOMMENDED_GROUPS.has(g.id) ? [] : g.events.filter((e) => !NOT_RECOMMENDED_EVENTS.has(e)),
);

/**
 * The spec's delivery policy. Whether local or private destinations are allowed is the deployment's
 * setting (WEBHOOKS_ALLOW_PRIVATE_DESTINATIONS, false by default as in the spec): the config reports it.
 */
export const DELIVERY_POLICY = {
  guarantee: 'at_least_once',
  retryableStatuses: [408, 425, 429, 500, 502, 503, 504],
  maxAttempts: 3,
} as const;

export const SIGNATURES = {
  scheme: 'hmac-sha256',
  header: 'x-svc-signature',
  timestampHeader: 'x-svc-timestamp',
  signedPayload: '<timestamp>.<deliveryId>.<eventId>.<rawBody>',
  format: 't=<timestamp>,v1=<hmac_sha256>',
} as const;
