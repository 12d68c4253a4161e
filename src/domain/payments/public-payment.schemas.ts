import { z } from 'zod';
import { ZAssetSymbol, ZFiatCurrency } from '../values/environment-values';
import { DECIMAL_PATTERN } from '../amounts/amounts';
import { ZIdempotencyKey } from '../requests/idempotency-records';
import { ZChainId } from '../../platform/int4';
import { ZNextAction, ZPaymentAmount, ZPaymentId, PAYMENT_STATUSES } from './payment.schemas';

/** An account's payment handle (created as 12 lowercase letters and digits): how a payer names the recipient. */
export const ZPaymentHandleRef = z.string().regex(/^[a-z0-9_-]{1,64}$/, 'a payment handle (lowercase letters, digits, _ or -)');

/**
 * POST /v2/public/apps/{appId}/payments. The recipient is named by its payment handle, never by an
 * account id; the network and asset must be one of the configuration's destinations.
 */
export const ZCreatePublicPayment = z.strictObject({
  recipient: z.strictObject({ handle: ZPaymentHandleRef }),
  amount: z.string().regex(DECIMAL_PATTERN, 'a decimal string such as "12.50"').max(40),
  chainId: ZChainId,
  assetSymbol: ZAssetSymbol,
  /** The currency the payer's wallet shows beside the amount; one of allowedFiatCurrencies. */
  fiatCurrency: ZFiatCurrency.optional(),
  description: z.string().min(1).max(280).optional(),
});
export type TCreatePublicPayment = z.output<typeof ZCreatePublicPayment>;

/** Long enough that two honest payers' keys (UUIDs) never meet in an app's public key space. */
export const ZPublicIdempotencyKey = ZIdempotencyKey.min(16);

const ZIsoDate = z.iso.datetime();

export const ZPublicDestination = z.strictObject({
  chainId: z.number().int(),
  networkCode: z.string(),
  chainName: z.string(),
  chainFamily: z.string(),
  assetSymbol: z.string(),
  tokenAddress: z.string(),
  decimals: z.number().int(),
  assetKind: z.string(),
  logoUrl: z.string().nullable(),
  minimumAmount: z.string(),
  maximumAmount: z.string(),
  available: z.boolean(),
  disabledReason: z.string().nullable(),
});

/** capabilities.payments.publicPaymentCreation of GET /v2/partners/config. */
export const ZPublicPaymentCreation = z.strictObject({
  enabled: z.boolean(),
  authentication: z.literal('none'),
  purpose: z.literal('wallet_payment'),
  methods: z.array(z.string()),
  destinations: z.array(ZPublicDestination),
  allowedFiatCurrencies: z.array(z.string()),
  paymentTtlSeconds: z.number().int(),
  configureEndpoint: z.string().nullable(),
  createEndpoint: z.string(),
});
export type TPublicPaymentCreation = z.infer<typeof ZPublicPaymentCreation>;

/** GET /v2/public/apps/{appId}/payments/configuration: what a payer's wallet needs to build a create request. */
export const ZPublicPaymentConfiguration = ZPublicPaymentCreation.extend({
  appId: z.string(),
  recipientReference: z.literal('payment_handle'),
  idempotencyKey: z.strictObject({ required: z.literal(true), minLength: z.number().int(), maxLength: z.number().int() }),
  rateLimit: z.strictObject({ scope: z.literal('client_ip'), points: z.number().int(), windowSeconds: z.number().int() }),
});

/** The payer's view of a public Payment: what to pay and to whom, never whose account it is. */
export const ZPublicPayment = z.strictObject({
  id: ZPaymentId,
  apiVersion: z.string(),
  intent: z.literal('receive'),
  status: z.enum(PAYMENT_STATUSES),
  statusVersion: z.number().int(),
  paymentAmount: ZPaymentAmount,
  network: z.strictObject({ chainId: z.number().int(), networkCode: z.string() }),
  fiatCurrency: z.string().nullable(),
  recipientDisplay: z.strictObject({ displayName: z.string().min(1), logoUrl: z.string().nullable() }),
  description: z.string().nullable(),
  expiresAt: ZIsoDate,
  createdAt: ZIsoDate,
});

export const ZPublicCheckout = z.strictObject({
  paymentUrl: z.string(),
  /** Always null: the payer has no client API session, and the page needs no secret. */
  clientSecret: z.null(),
  expiresAt: ZIsoDate,
  returnUrl: z.null(),
});

export const ZCreatePublicPaymentResponse = z.strictObject({ payment: ZPublicPayment, checkout: ZPublicCheckout, nextAction: ZNextAction });
export type TCreatePublicPaymentResponse = z.infer<typeof ZCreatePublicPaymentResponse>;
