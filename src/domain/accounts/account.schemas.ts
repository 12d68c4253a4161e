import { z } from 'zod';
import { ZAssetSymbol } from '../values/environment-values';
import { checkEvmAddress } from '../../chain/address';
import { ZMetadata } from '../values/metadata';
import { ZChainId, zInt4 } from '../../platform/int4';

// No control characters: these ids end up in headers (x-svc-external-user-id) and logs.
export const ZExternalUserId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[^\u0000-\u001f\u007f]+$/, 'must not contain control characters');

export const ZAccountId = z
  .string()
  .regex(/^acct_[A-Za-z0-9_-]+$/, 'an account id (acct_...)')
  .max(64);
export const ZWalletId = z
  .string()
  .regex(/^wallet_[A-Za-z0-9_-]+$/, 'a connected wallet id (wallet_...)')
  .max(64);
/**
 * A partner's EVM address: 0x and 40 hex digits (the documented pattern); a wrong EIP-55 checksum of a
 * mixed-case one is refused too; the output is always checksummed.
 */
export const ZEvmAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte EVM address')
  .transform((value, ctx) => {
    const checked = checkEvmAddress(value);
    if (checked.ok) return checked.address;
    ctx.addIssue({ code: 'custom', message: checked.reason });
    return z.NEVER;
  });

export const SUBJECT_TYPES = ['individual', 'business'] as const;

export const ZCreateAccount = z.strictObject({
  externalUserId: ZExternalUserId,
  subjectType: z.enum(SUBJECT_TYPES).default('individual'),
  metadata: ZMetadata.default({}),
});
export type TCreateAccount = z.output<typeof ZCreateAccount>;

export const ZUpdateDisplayProfile = z.strictObject({
  displayName: z.string().min(1).max(120),
  logoUrl: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .optional(),
  expectedVersion: zInt4(),
  reason: z.string().min(10).max(500),
});
export type TUpdateDisplayProfile = z.output<typeof ZUpdateDisplayProfile>;

/** PUT /v2/accounts/{accountId}/payment-acceptance: expectedVersion is account.paymentAcceptance.version. */
export const ZUpdatePaymentAcceptance = z.strictObject({
  publicReceiveEnabled: z.boolean(),
  expectedVersion: zInt4(),
});
export type TUpdatePaymentAcceptance = z.output<typeof ZUpdatePaymentAcceptance>;

export const ZRegisterConnectedWallet = z.strictObject({
  kind: z.literal('evm').default('evm'),
  chainId: ZChainId,
  address: ZEvmAddress,
  label: z.string().min(1).max(120).optional(),
});
export type TRegisterConnectedWallet = z.output<typeof ZRegisterConnectedWallet>;

export const ZSetSettlementProfile = z.strictObject({
  connectedWalletId: ZWalletId,
  assetSymbol: ZAssetSymbol.optional(),
});
export type TSetSettlementProfile = z.output<typeof ZSetSettlementProfile>;

// ---- responses ----
const ZDateTime = z.iso.datetime();

export const ZPaymentHandle = z.object({
  id: z.string(),
  accountId: z.string(),
  namespace: z.string(),
  handle: z.string(),
  status: z.string(),
  createdAt: ZDateTime,
  updatedAt: ZDateTime,
});

export const ZConnectedWallet = z.object({
  id: z.string(),
  accountId: z.string(),
  kind: z.literal('evm'),
  chainId: z.number().int(),
  address: z.string(),
  label: z.string().nullable(),
  status: z.string(),
  ownershipVerificationStatus: z.string(),
  ownershipVerificationMethod: z.string(),
  settlementProfileId: z.string().nullable(),
  createdAt: ZDateTime,
  updatedAt: ZDateTime,
});

export const ZSettlementProfile = z.object({
  id: z.string(),
  accountId: z.string(),
  version: z.number().int(),
  connectedWalletId: z.string().nullable(),
  settlementDestinationId: z.string(),
  status: z.string(),
  destinationType: z.string(),
  chainId: z.number().int(),
  destinationAddress: z.string(),
  assetSymbol: z.string(),
  tokenAddress: z.string(),
  snapshot: z.record(z.string(), z.unknown()),
});

export const ZDisplayProfile = z.object({
  displayName: z.string().nullable(),
  logoUrl: z.string().nullable(),
  version: z.number().int(),
});

export const ZAccountBundle = z.object({
  account: z.object({
    id: z.string(),
    externalUserId: z.string(),
    subjectType: z.string(),
    status: z.string(),
    paymentAcceptance: z.object({ publicReceiveEnabled: z.boolean(), version: z.number().int() }),
    metadata: z.record(z.string(), z.unknown()),
    createdAt: ZDateTime,
    updatedAt: ZDateTime,
  }),
  displayProfile: ZDisplayProfile,
  paymentHandle: ZPaymentHandle.nullable(),
  connectedWallets: z.array(ZConnectedWallet),
  settlementProfile: ZSettlementProfile.nullable(),
});
export type TAccountBundle = z.infer<typeof ZAccountBundle>;

export const ZAccountCapabilities = z.object({
  accountId: z.string(),
  capabilities: z.object({
    receivePayments: z.object({ available: z.boolean(), disabledReason: z.string().nullable() }),
    sendPayments: z.object({ available: z.boolean(), disabledReason: z.string().nullable() }),
    depositAddresses: z.object({ available: z.boolean(), disabledReason: z.string().nullable() }),
    connectedWallets: z.object({ available: z.boolean(), supportedChainIds: z.array(z.number().int()) }),
    settlement: z.object({ configured: z.boolean(), settlementProfileId: z.string().nullable() }),
  }),
});
export type TAccountCapabilities = z.infer<typeof ZAccountCapabilities>;
