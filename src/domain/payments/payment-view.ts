import type { FundReturn, Payment, PaymentIncident, PaymentPayout } from '../../generated/prisma/client';
import { refundSummaryOf } from '../returns/fund-return-rules';
import { formatAtomic } from '../amounts/amounts';
import { hmacHex, safeEqual } from '../../platform/secrets';
import type { TNextAction, TPayment } from './payment.schemas';
import type { TFinality } from '../chain/finality.schemas';
import { isOpenStatus } from './pure/payment-machine';
import type { z } from 'zod';
import type { ZCheckout } from './payment.schemas';
import { anyKey, currentKey, type ServiceSecret } from '../keys/service-keys';

/** payout: a bank Payment's quote and payout (null for upa Payments). */
export type PaymentRow = Payment & { incidents: PaymentIncident[]; fundReturns: FundReturn[]; payout?: PaymentPayout | null };

/** What every read of a Payment for its view loads with it (its incidents, refunds and recoveries, a bank Payment's payout). */
export const PAYMENT_VIEW_INCLUDE = { incidents: true, fundReturns: true, payout: true } as const;

function amountObject(p: Payment, atomic: bigint) {
  return {
    amount: formatAtomic(atomic, p.decimals),
    amountAtomic: atomic.toString(),
    assetType: 'crypto' as const,
    assetCode: p.assetCode,
    decimals: p.decimals,
    chainId: p.chainId,
    tokenAddress: p.tokenAddress,
  };
}

const big = (d: { toString(): string }) => BigInt(d.toString());
const iso = (d: Date | null) => (d ? d.toISOString() : null);

type Amounts = Pick<Payment, 'amountAtomic' | 'receivedAtomic' | 'pendingAtomic'>;
type Instructed = Pick<Payment, 'escrowAddress' | 'chainId' | 'tokenAddress' | 'assetCode' | 'decimals'>;

/** What the payer still owes: the amount less confirmed funds and funds seen but still confirming. */
export function remainingOf(p: Amounts): bigint {
  const rest = big(p.amountAtomic) - big(p.receivedAtomic) - big(p.pendingAtomic);
  return rest > 0n ? rest : 0n;
}

function depositInstructions(p: Instructed, atomic: bigint) {
  return {
    address: p.escrowAddress ?? '',
    chainId: p.chainId,
    tokenAddress: p.tokenAddress,
    assetCode: p.assetCode,
    decimals: p.decimals,
    amount: formatAtomic(atomic, p.decimals),
    amountAtomic: atomic.toString(),
  };
}

/** Where the Payment settles, from the snapshot taken at its creation, in the Payment's asset. */
function settlementView(p: Payment): TPayment['settlement'] {
  const settlement = p.settlement as Record<string, unknown>;
  return {
    type: 'settlement_destination',
    settlementDestinationId: (settlement.settlementDestinationId as string | undefined) ?? null,
    destinationType: String(settlement.destinationType),
    destinationAddress: String(settlement.destinationAddress),
    chainId: p.chainId,
    assetCode: p.assetCode,
    tokenAddress: p.tokenAddress,
    decimals: p.decimals,
  };
}

function feesView(p: Payment, platformFee: bigint, partnerFee: bigint): TPayment['fees'] {
  return {
    version: 1,
    pricingStatus: 'quoted',
    platformFeeBps: p.platformFeeBps,
    partnerFeeBps: p.partnerFeeBps,
    platformFeeAmountAtomic: platformFee.toString(),
    partnerFeeAmountAtomic: partnerFee.toString(),
    merchantNetAmountAtomic: p.merchantNetAtomic.toString(),
  };
}

/** How the payer funds the Payment (escrow Payments only): what is required and where it goes. */
function fundingView(p: PaymentRow, gross: bigint, platformFee: bigint, partnerFee: bigint): TPayment['funding'] {
  if (!p.escrowAddress) return null;
  return {
    mode: 'escrow',
    required: amountObject(p, gross),
    // A bank Payment's quote: the provider converts its principal and keeps its fee.
    providerPrincipal: amountObject(p, p.payout ? big(p.payout.providerPrincipalAtomic) : gross),
    providerFee: amountObject(p, p.payout ? big(p.payout.providerFeeAtomic) : 0n),
    platformFee: amountObject(p, platformFee),
    partnerFee: amountObject(p, partnerFee),
    totalFees: amountObject(p, platformFee + partnerFee),
    exchangeRate: p.payout
      ? { rate: p.payout.rate, baseAssetCode: p.assetCode, quoteAssetCode: p.payout.destinationCurrency }
      : { rate: '1', baseAssetCode: p.assetCode, quoteAssetCode: p.assetCode },
    quoteExpiresAt: (p.payout?.quoteExpiresAt ?? p.expiresAt).toISOString(),
    depositAddress: depositInstructions(p, gross),
  };
}

function incidentRecoverySummaryOf(incidents: PaymentIncident[]): TPayment['incidentRecoverySummary'] {
  const sum = (xs: PaymentIncident[]) => xs.reduce((acc, i) => acc + big(i.amountAtomic), 0n).toString();
  return {
    count: incidents.length,
    pendingCount: incidents.filter((i) => i.status === 'pending').length,
    confirmedCount: incidents.filter((i) => i.status === 'confirmed').length,
    failedCount: incidents.filter((i) => i.status === 'failed').length,
    requiresInterventionCount: incidents.filter((i) => i.status === 'requires_intervention').length,
    requestedAmountAtomic: sum(incidents),
    confirmedAmountAtomic: sum(incidents.filter((i) => i.status === 'confirmed')),
  };
}

/** finality: read with it (src/domain/chain/finality.ts), or NO_FINALITY for a Payment just created. */
export function toPaymentView(p: PaymentRow, finality: TFinality): TPayment {
  const gross = big(p.amountAtomic);
  const platformFee = big(p.platformFeeAtomic);
  const partnerFee = big(p.partnerFeeAtomic);
  return {
    id: p.id,
    apiVersion: p.apiVersion,
    intent: p.intent as TPayment['intent'],
    amountMode: 'collect_exact',
    status: p.status as TPayment['status'],
    offrampStatus: p.offrampStatus,
    stage: p.stage,
    operationalState: p.operationalState as TPayment['operationalState'],
    operationalReasonCode: p.operationalReasonCode,
    operationalUpdatedAt: iso(p.operationalUpdatedAt),
    statusVersion: p.statusVersion,
    paymentAmount: amountObject(p, gross),
    sourceAmount: amountObject(p, gross),
    participants: [
      ...(p.senderAccountId ? [{ role: 'sender' as const, accountId: p.senderAccountId }] : []),
      { role: 'recipient' as const, accountId: p.recipientAccountId },
    ],
    recipientDisplay: { displayName: p.recipientDisplayName, logoUrl: p.recipientLogoUrl },
    destination: p.payout
      ? { type: 'bank_account', accountId: p.recipientAccountId, bankAccountId: p.payout.bankAccountId }
      : { type: 'upa', accountId: p.recipientAccountId },
    settlement: settlementView(p),
    fees: feesView(p, platformFee, partnerFee),
    funding: fundingView(p, gross, platformFee, partnerFee),
    externalReference: p.externalReference,
    description: p.description,
    metadata: p.metadata as Record<string, unknown>,
    expiresAt: iso(p.expiresAt),
    acceptedAt: iso(p.acceptedAt),
    succeededAt: iso(p.succeededAt),
    cancelledAt: iso(p.cancelledAt),
    failure: p.failureCode || p.failureMessage ? { code: p.failureCode, message: p.failureMessage } : null,
    refundSummary: refundSummaryOf(
      gross,
      p.fundReturns.filter((r) => r.kind === 'refund').map((r) => ({ status: r.status, amountAtomic: big(r.amountAtomic) })),
    ),
    incidentRecoverySummary: incidentRecoverySummaryOf(p.incidents),
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
    finality,
  };
}

/** What toNextAction reads: the Payment's state and whether its incidents' funds are still held. */
export type NextActionSource = Amounts &
  Instructed &
  Pick<Payment, 'status' | 'operationalState' | 'operationalReasonCode' | 'nextActionId' | 'expiresAt'> & {
    incidents: ReadonlyArray<Pick<PaymentIncident, 'status'>>;
  };

/** Holds where the money sits at the off-ramp provider, refused or in doubt: never retried by itself (spec: escalate). */
const SUPPORT_HOLDS: ReadonlySet<string> = new Set(['provider_state_uncertain', 'provider_failure']);

/**
 * What the Payment needs now (docs/decisions/payments.md "nextAction variants"), exactly one variant per state:
 * succeeded or cancelled: null. Held (requires_intervention): contact_support when the provider holds
 * the money, else waiting_for_review (an operator releases it). Failed or expired: contact_support
 * while funds it received are still held (an incident not recovered), else null. Open: transaction
 * with what is still owed, or none while the funds seen cover it and confirm (never ask to pay twice).
 * Accepted (settling, retrying included): none.
 */
export function toNextAction(p: NextActionSource): TNextAction {
  if (p.status === 'succeeded' || p.status === 'cancelled') return null;
  const id = p.nextActionId;
  const quiet = { id, expiresAt: null, depositInstructions: null };
  if (p.operationalState === 'requires_intervention') {
    const reasonCode = p.operationalReasonCode ?? 'requires_intervention';
    return SUPPORT_HOLDS.has(reasonCode)
      ? { type: 'contact_support', ...quiet, reasonCode }
      : { type: 'waiting_for_review', ...quiet, reasonCode };
  }
  if (p.status === 'failed' || p.status === 'expired') {
    return p.incidents.some((i) => i.status !== 'confirmed') ? { type: 'contact_support', ...quiet, reasonCode: 'funds_held' } : null;
  }
  if (!p.escrowAddress) return null;
  if (!isOpenStatus(p.status)) return { type: 'none', ...quiet };
  const remaining = remainingOf(p);
  const expiresAt = p.expiresAt.toISOString();
  if (remaining > 0n) return { id, type: 'transaction', expiresAt, depositInstructions: depositInstructions(p, remaining) };
  return { id, type: 'none', expiresAt, depositInstructions: null };
}

/**
 * The checkout clientSecret is derived (HMAC of the Payment id under the service secret), never
 * stored: the create response and its idempotent replays recompute it, and verification compares
 * in constant time.
 */
export function clientSecretFor(serviceSecret: ServiceSecret, paymentId: string): string {
  return clientSecretUnder(currentKey(serviceSecret), paymentId);
}

const clientSecretUnder = (key: string, paymentId: string) =>
  `${paymentId}_secret_${hmacHex(key, `client-secret:${paymentId}`).slice(0, 40)}`;

/** Under any accepted key: a client secret handed out before a key rotation keeps working until its key is dropped. */
export function verifyClientSecret(serviceSecret: ServiceSecret, paymentId: string, candidate: string): boolean {
  return anyKey(serviceSecret, (key) => safeEqual(clientSecretUnder(key, paymentId), candidate));
}

type WithCheckout = { payment?: { id?: string }; checkout?: { clientSecret?: string | null } };

/**
 * An idempotent response holding a checkout is stored without its clientSecret, and a replay derives
 * it again: the secret is never at rest (the idempotency middleware's seal and unseal).
 */
export function checkoutSecretSealing(serviceSecret: ServiceSecret) {
  return {
    seal(body: unknown): unknown {
      const b = body as WithCheckout;
      return b?.checkout?.clientSecret ? { ...b, checkout: { ...b.checkout, clientSecret: null } } : body;
    },
    unseal(stored: unknown): unknown {
      const b = stored as WithCheckout;
      if (!b?.checkout || !b.payment?.id) return stored;
      return { ...b, checkout: { ...b.checkout, clientSecret: clientSecretFor(serviceSecret, b.payment.id) } };
    },
  };
}

/** checkout.paymentUrl: the hosted checkout page of a Payment. */
export function paymentUrlFor(publicBaseUrl: string, paymentId: string): string {
  return `${publicBaseUrl.replace(/\/$/, '')}/checkout/${paymentId}`;
}

export function toCheckout(p: Payment, serviceSecret: ServiceSecret, publicBaseUrl: string): z.infer<typeof ZCheckout> {
  return {
    paymentUrl: paymentUrlFor(publicBaseUrl, p.id),
    clientSecret: clientSecretFor(serviceSecret, p.id),
    expiresAt: p.expiresAt.toISOString(),
    returnUrl: p.returnUrl,
  };
}
