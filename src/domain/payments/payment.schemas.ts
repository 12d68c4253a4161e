import { z } from 'zod';
import { ZAssetSymbol } from '../values/environment-values';
import { ZFinality } from '../chain/finality.schemas';
import { ZCursor } from '../requests/pagination';
import { ZAccountId } from '../accounts/account.schemas';
import { DECIMAL_PATTERN } from '../amounts/amounts';
import { ZMetadata } from '../values/metadata';
import { ZChainId, zInt4, zInt4Param } from '../../platform/int4';

export const ZPaymentId = z
  .string()
  .regex(/^payment_[A-Za-z0-9_-]+$/, 'a Payment id (payment_...)')
  .max(64);

const ZUpaDestination = z.strictObject({ type: z.literal('upa'), accountId: ZAccountId });
// A linked bank account (its owner is the recipient): paid out through the off-ramp provider.
const ZBankDestination = z.strictObject({
  type: z.literal('bank_account'),
  bankAccountId: z
    .string()
    .regex(/^bank_account_[A-Za-z0-9_-]+$/, 'a bank account id (bank_account_...)')
    .max(64),
});

/** What every Payment creation carries, whatever its intent. */
const paymentFields = {
  amount: z.string().regex(DECIMAL_PATTERN, 'a decimal string such as "12.50"').max(40),
  assetCode: ZAssetSymbol,
  chainId: ZChainId,
  expiresInSeconds: zInt4({ min: 60, max: 86_400 }).default(600),
  externalReference: z.string().min(1).max(255).optional(),
  description: z.string().min(1).max(1000).optional(),
  metadata: ZMetadata.default({}),
  returnUrl: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .optional(),
};

/**
 * POST /v2/payments. The intent chooses the shape, so the document states it: a receive Payment pays
 * an account (UPA) and has no source account; a send Payment names its source account and pays an
 * account or a linked bank account. One rule stays outside the shape: a send's source and destination differ.
 */
export const ZCreatePayment = z
  .discriminatedUnion('intent', [
    z.strictObject({ intent: z.literal('receive'), ...paymentFields, destination: ZUpaDestination }),
    z.strictObject({
      intent: z.literal('send'),
      ...paymentFields,
      sourceAccountId: ZAccountId,
      destination: z.discriminatedUnion('type', [ZUpaDestination, ZBankDestination]),
    }),
  ])
  .superRefine((v, ctx) => {
    if (v.intent === 'send' && v.destination.type === 'upa' && v.sourceAccountId === v.destination.accountId) {
      ctx.addIssue({ code: 'custom', path: ['sourceAccountId'], message: 'Source and destination must differ' });
    }
  });
export type TCreatePayment = z.output<typeof ZCreatePayment>;

export const CANCEL_REASON_CODES = ['customer_request', 'duplicate', 'abandoned', 'other'] as const;
export const ZCancelPayment = z.strictObject({
  reasonCode: z.enum(CANCEL_REASON_CODES),
  reason: z.string().min(1).max(500).optional(),
});
export type TCancelPayment = z.output<typeof ZCancelPayment>;

const ZIsoDate = z.iso.datetime();
export const PAYMENT_STATUSES = [
  'requires_payment_method',
  'processing',
  'accepted',
  'succeeded',
  'failed',
  'cancelled',
  'expired',
] as const;

export const ZListPaymentsQuery = z.strictObject({
  limit: zInt4Param({ min: 1, max: 100 }).default(20),
  cursor: ZCursor.optional(),
  externalReference: z.string().min(1).max(255).optional(),
  status: z.enum(PAYMENT_STATUSES).optional(),
  createdFrom: ZIsoDate.optional(),
  createdTo: ZIsoDate.optional(),
});
export type TListPaymentsQuery = z.output<typeof ZListPaymentsQuery>;

// ---- responses ----
export const ZPaymentAmount = z.object({
  amount: z.string(),
  amountAtomic: z.string(),
  assetType: z.literal('crypto'),
  assetCode: z.string(),
  decimals: z.number().int(),
  chainId: z.number().int(),
  tokenAddress: z.string(),
});

const ZDepositInstructions = z.object({
  address: z.string(),
  chainId: z.number().int(),
  tokenAddress: z.string(),
  assetCode: z.string(),
  decimals: z.number().int(),
  amount: z.string(),
  amountAtomic: z.string(),
});

export const ZPayment = z.object({
  id: ZPaymentId,
  apiVersion: z.string(),
  intent: z.enum(['receive', 'send']),
  amountMode: z.literal('collect_exact'),
  status: z.enum(PAYMENT_STATUSES),
  offrampStatus: z.string().nullable(),
  stage: z.string().nullable(),
  operationalState: z.enum(['normal', 'retrying', 'requires_intervention']),
  operationalReasonCode: z.string().nullable(),
  operationalUpdatedAt: ZIsoDate.nullable(),
  statusVersion: z.number().int(),
  paymentAmount: ZPaymentAmount,
  sourceAmount: ZPaymentAmount,
  participants: z.array(z.object({ role: z.enum(['sender', 'recipient']), accountId: z.string() })),
  // Captured at creation; displayName is the display profile's, else the account's payment handle.
  recipientDisplay: z.object({ displayName: z.string().min(1), logoUrl: z.string().nullable() }),
  destination: z.discriminatedUnion('type', [
    z.object({ type: z.literal('upa'), accountId: z.string() }),
    z.object({ type: z.literal('bank_account'), accountId: z.string(), bankAccountId: z.string() }),
  ]),
  settlement: z.object({
    type: z.literal('settlement_destination'),
    settlementDestinationId: z.string().nullable(),
    destinationType: z.string(),
    destinationAddress: z.string(),
    chainId: z.number().int(),
    assetCode: z.string(),
    tokenAddress: z.string(),
    decimals: z.number().int(),
  }),
  fees: z.object({
    version: z.number().int().nullable(),
    pricingStatus: z.enum(['quote_pending', 'quoted']),
    platformFeeBps: z.number().int(),
    partnerFeeBps: z.number().int(),
    platformFeeAmountAtomic: z.string().nullable(),
    partnerFeeAmountAtomic: z.string().nullable(),
    merchantNetAmountAtomic: z.string().nullable(),
  }),
  funding: z
    .object({
      mode: z.literal('escrow'),
      required: ZPaymentAmount,
      providerPrincipal: ZPaymentAmount,
      providerFee: ZPaymentAmount,
      platformFee: ZPaymentAmount,
      partnerFee: ZPaymentAmount,
      totalFees: ZPaymentAmount,
      exchangeRate: z.object({ rate: z.string(), baseAssetCode: z.string(), quoteAssetCode: z.string() }),
      quoteExpiresAt: ZIsoDate,
      depositAddress: ZDepositInstructions,
    })
    .nullable(),
  externalReference: z.string().nullable(),
  description: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  expiresAt: ZIsoDate.nullable(),
  acceptedAt: ZIsoDate.nullable(),
  succeededAt: ZIsoDate.nullable(),
  cancelledAt: ZIsoDate.nullable(),
  failure: z.object({ code: z.string().nullable(), message: z.string().nullable() }).nullable(),
  refundSummary: z.object({
    status: z.string(),
    count: z.number().int(),
    requestedAmountAtomic: z.string(),
    confirmedAmountAtomic: z.string(),
  }),
  incidentRecoverySummary: z.object({
    count: z.number().int(),
    pendingCount: z.number().int(),
    confirmedCount: z.number().int(),
    failedCount: z.number().int(),
    requiresInterventionCount: z.number().int(),
    requestedAmountAtomic: z.string(),
    confirmedAmountAtomic: z.string(),
  }),
  createdAt: ZIsoDate,
  updatedAt: ZIsoDate,
  /** Where its money stands on chain: each incoming transfer and each settlement leg (docs/api-guide.md, "Live finality"). */
  finality: ZFinality,
});
export type TPayment = z.infer<typeof ZPayment>;

/**
 * The variants the service produces (toNextAction, docs/decisions/payments.md "nextAction variants"), and no
 * other: `transaction` (send what is still owed to the deposit address, until expiresAt), `none`
 * (nothing to send: funds confirming, or settling; expiresAt while the Payment is open), and
 * `waiting_for_review` / `contact_support` (a hold or held funds; reasonCode says why). Only
 * `transaction` carries deposit instructions.
 */
const ZNoInstructions = { id: z.string(), expiresAt: z.null(), depositInstructions: z.null(), reasonCode: z.string() };
export const ZNextAction = z
  .discriminatedUnion('type', [
    z.strictObject({ id: z.string(), type: z.literal('transaction'), expiresAt: ZIsoDate, depositInstructions: ZDepositInstructions }),
    z.strictObject({ id: z.string(), type: z.literal('none'), expiresAt: ZIsoDate.nullable(), depositInstructions: z.null() }),
    z.strictObject({ type: z.literal('waiting_for_review'), ...ZNoInstructions }),
    z.strictObject({ type: z.literal('contact_support'), ...ZNoInstructions }),
  ])
  .nullable();
export type TNextAction = z.infer<typeof ZNextAction>;

export const ZCheckout = z.object({
  paymentUrl: z.string(),
  clientSecret: z.string(),
  expiresAt: ZIsoDate,
  returnUrl: z.string().nullable(),
});

export const ZCreatePaymentResponse = z.object({ payment: ZPayment, checkout: ZCheckout, nextAction: ZNextAction });
export const ZPaymentResponse = z.object({ payment: ZPayment, nextAction: ZNextAction });
export const ZPaymentList = z.object({ data: z.array(ZPayment), nextCursor: z.string().nullable() });
export type TPaymentList = z.infer<typeof ZPaymentList>;
