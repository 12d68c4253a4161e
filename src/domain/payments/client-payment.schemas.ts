import { z } from 'zod';
import { ZMetadata } from '../values/metadata';
import { ZActionId, ZPaymentOption } from './payment-option.schemas';
import { ZCheckout, ZNextAction, ZPayment } from './payment.schemas';
import { ZFundingOperation } from '../vaults/vault.schemas';

export const ZTransactionProof = z.strictObject({
  type: z.literal('transaction'),
  transactionHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a transaction hash (0x and 64 hex digits)'),
});

/** The spec names managed_authorization for the Vault option's authorize; confirm refuses it (wrong action). */
export const ZManagedAuthorizationProof = z.strictObject({
  type: z.literal('managed_authorization'),
  authorization: z.literal('approved'),
});

/** actionId and proof are required (nothing to confirm without them); metadata is optional. */
export const ZConfirmClientPayment = z.strictObject({
  actionId: ZActionId,
  proof: z.discriminatedUnion('type', [ZTransactionProof, ZManagedAuthorizationProof]),
  metadata: ZMetadata.default({}),
});
export type TConfirmClientPayment = z.output<typeof ZConfirmClientPayment>;

export const ZClientPaymentResponse = z.strictObject({
  payment: ZPayment,
  checkout: ZCheckout,
  nextAction: ZNextAction,
  options: z.array(ZPaymentOption),
});

export const ZClientConfirmResponse = z.strictObject({
  payment: ZPayment,
  checkout: ZCheckout,
  nextAction: ZNextAction,
});

/** POST .../options/{optionId}/authorize: the spec's table (actionId 1-128, the managed approval's proof, metadata). */
export const ZAuthorizeVaultOption = z.strictObject({
  actionId: ZActionId,
  proof: ZManagedAuthorizationProof,
  metadata: ZMetadata.default({}),
});
export type TAuthorizeVaultOption = z.output<typeof ZAuthorizeVaultOption>;

export const ZAuthorizeVaultOptionResponse = z.strictObject({
  paymentId: z.string(),
  option: ZPaymentOption,
  fundingOperation: ZFundingOperation,
});
