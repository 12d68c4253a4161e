import { z } from 'zod';

const ZIsoDate = z.iso.datetime();
export const ZPaymentOptionId = z
  .string()
  .regex(/^pay_option_[A-Za-z0-9_-]+$/, 'a payment option id (pay_option_...)')
  .max(64);
export const ZActionId = z.string().min(1).max(128);

/** sourceAmount, destinationAmount (spec: Option amounts). */
export const ZOptionAmount = z.strictObject({
  amountAtomic: z.string(),
  assetSymbol: z.string(),
  decimals: z.number().int(),
  chainId: z.number().int(),
});

/** payerAmount, recipientAmount, providerFee (spec: Option amounts). */
export const ZOptionSettledAmount = z.strictObject({
  amountAtomic: z.string(),
  amountDecimal: z.string(),
  assetSymbol: z.string(),
  decimals: z.number().int(),
  chainId: z.number().int(),
  tokenAddress: z.string(),
});

/** A transfer the option has seen for its Payment (the chain's record, as the scanner or a confirm found it). */
export const ZTransactionSubmission = z.strictObject({
  transactionHash: z.string(),
  chainId: z.number().int(),
  amountAtomic: z.string(),
  status: z.string(),
  submittedAt: ZIsoDate,
});

/** A confirmed funding transfer: the payer's evidence that it paid. */
export const ZOptionReceipt = z.strictObject({
  type: z.literal('transaction'),
  transactionHash: z.string(),
  chainId: z.number().int(),
  amountAtomic: z.string(),
  confirmedAt: ZIsoDate,
});

/** What the payer executes next: the actionId to send back (confirm or authorize), single use. */
export const ZOptionExecution = z
  .strictObject({
    actionId: ZActionId,
    type: z.string(),
    expiresAt: ZIsoDate,
  })
  .nullable();

/** Every field of the spec's "Payment option (account-bound checkout option)". */
export const ZPaymentOption = z.strictObject({
  id: ZPaymentOptionId,
  providerCode: z.string(),
  paymentMethodType: z.string(),
  paymentMethodId: z.string(),
  type: z.string(),
  displayName: z.string(),
  status: z.enum(['available', 'processing', 'completed', 'unavailable']),
  selectionStatus: z.enum(['selected', 'not_selected']),
  requiredAmountAtomic: z.string(),
  paidAmountAtomic: z.string(),
  remainingAmountAtomic: z.string(),
  isTerminal: z.boolean(),
  confirmationMode: z.string(),
  transactionSubmissions: z.array(ZTransactionSubmission),
  sourceAmount: ZOptionAmount,
  destinationAmount: ZOptionAmount,
  payerAmount: ZOptionSettledAmount,
  recipientAmount: ZOptionSettledAmount,
  providerFee: ZOptionSettledAmount,
  execution: ZOptionExecution,
  expiresAt: ZIsoDate.nullable(),
  refreshable: z.boolean(),
  feeAmountAtomic: z.string(),
  actionExpiresAt: ZIsoDate.nullable(),
  quoteExpiresAt: ZIsoDate.nullable(),
  orderExpiresAt: ZIsoDate.nullable(),
  receipts: z.array(ZOptionReceipt),
});
export type TPaymentOption = z.infer<typeof ZPaymentOption>;
