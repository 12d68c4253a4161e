import { z } from 'zod';
import { ZTokenAmount } from '../amounts/token-amount.schemas';
import { ZCursor } from '../requests/pagination';
import { ZChainId, zInt4Param } from '../../platform/int4';
import { POSITIVE_DECIMAL_PATTERN } from '../amounts/amounts';
import { ZAccountId } from '../accounts/account.schemas';
import { ZPaymentId } from '../payments/payment.schemas';
import { FUNDING_REFUSALS, RULE_VERDICTS, VAULT_POLICY_RULES } from './pure/vault-policy-rules';

// ---- requests ----
const ZAtomicString = z.string().regex(/^[1-9]\d{0,77}$/, 'a positive integer string of atomic units');
const ZTokenAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'an EVM address');

/** Body of POST /v2/accounts/{accountId}/vault; an empty body (or none) takes the environment's network. */
export const ZCreateVault = z.strictObject({
  chainId: ZChainId.optional(),
});
export type TCreateVault = z.output<typeof ZCreateVault>;

/** Body of PUT /v2/accounts/{accountId}/vault/policy. */
export const ZPutVaultPolicy = z.strictObject({
  spendLimit: z.strictObject({ amountAtomic: ZAtomicString.optional() }).optional(),
  period: z.literal('fixed_30_day').default('fixed_30_day'),
  allowedTokens: z
    .array(z.strictObject({ chainId: ZChainId, tokenAddress: ZTokenAddress }))
    .min(1)
    .max(20),
  managedApproval: z.strictObject({
    method: z.literal('email_otp'),
    email: z.email().max(254),
  }),
});
export type TPutVaultPolicy = z.output<typeof ZPutVaultPolicy>;

/** Body of POST /v2/accounts/{accountId}/vault/policy/approval/verify. */
export const ZVerifyVaultApproval = z.strictObject({
  code: z.string().regex(/^\d{6}$/, 'the 6-digit code from the email'),
});
export type TVerifyVaultApproval = z.output<typeof ZVerifyVaultApproval>;

export const ZVaultId = z
  .string()
  .regex(/^vault_[A-Za-z0-9]+$/, 'a vault id (vault_...)')
  .max(64);

/**
 * Body of POST /v2/vaults/{vaultId}/policy/evaluate: a would-be spend from the vault, validated as a
 * receive Payment's fields are (the destination is the recipient account the vault would pay).
 */
export const ZEvaluateVaultPolicy = z.strictObject({
  amount: z.string().regex(POSITIVE_DECIMAL_PATTERN, 'a decimal string greater than 0, such as "12.50"').max(40),
  assetCode: z.string().min(1).max(16),
  chainId: ZChainId,
  destination: z.strictObject({ type: z.literal('upa'), accountId: ZAccountId }),
  paymentId: ZPaymentId.optional(),
});
export type TEvaluateVaultPolicy = z.output<typeof ZEvaluateVaultPolicy>;

/** The spec's List vault audit events query: limit 1-100, default 20. */
export const ZListVaultAuditEventsQuery = z.strictObject({
  limit: zInt4Param({ min: 1, max: 100 }).default(20),
  cursor: ZCursor.optional(),
});
export type TListVaultAuditEventsQuery = z.output<typeof ZListVaultAuditEventsQuery>;

// ---- responses ----
const ZDateTime = z.iso.datetime();

export const ZVaultToken = z.strictObject({
  symbol: z.string(),
  chainId: z.number().int(),
  tokenAddress: z.string(),
  decimals: z.number().int(),
});

export const ZVaultPolicy = z.strictObject({
  id: z.string().regex(/^vault_policy_[A-Za-z0-9]+$/),
  vaultId: z.string(),
  version: z.number().int().min(1),
  status: z.enum(['pending_approval', 'active', 'superseded']),
  spendLimit: z.strictObject({
    amountAtomic: z.string(),
    currency: z.string(),
    decimals: z.number().int(),
    period: z.literal('fixed_30_day'),
  }),
  allowedTokens: z.array(ZVaultToken),
  managedApproval: z.strictObject({ method: z.literal('email_otp'), email: z.string() }),
  activatedAt: ZDateTime.nullable(),
  createdAt: ZDateTime,
  updatedAt: ZDateTime,
});
export type TVaultPolicy = z.infer<typeof ZVaultPolicy>;

export const ZVaultBalance = ZVaultToken.extend({
  /** On-chain balanceOf at the latest block. */
  balanceAtomic: z.string(),
  /** Authorized or broadcast funding not yet confirmed on chain. */
  reservedAtomic: z.string(),
  availableAtomic: z.string(),
});

export const ZVault = z.strictObject({
  id: z.string().regex(/^vault_[A-Za-z0-9]+$/),
  accountId: z.string(),
  status: z.enum(['active']),
  chainId: z.number().int(),
  address: z.string(),
  ownership: z.literal('stableyard'),
  policy: ZVaultPolicy.nullable(),
  pendingPolicy: ZVaultPolicy.nullable(),
  spendPeriod: z
    .strictObject({ startsAt: ZDateTime, endsAt: ZDateTime, authorizedAtomic: z.string(), remainingAtomic: z.string() })
    .nullable(),
  balances: z.array(ZVaultBalance),
  createdAt: ZDateTime,
  updatedAt: ZDateTime,
});
export type TVault = z.infer<typeof ZVault>;
export const ZVaultResponse = z.strictObject({ vault: ZVault });

export const ZVaultPolicyRuleResult = z.strictObject({
  rule: z.enum(VAULT_POLICY_RULES),
  verdict: z.enum(RULE_VERDICTS),
  /** The refusal a failed rule answers (details.reasonCode of the real authorization's 422). */
  reasonCode: z.enum(FUNDING_REFUSALS).nullable(),
  detail: z.string(),
});

export const ZVaultPolicyEvaluation = z.strictObject({
  vaultId: z.string(),
  accountId: z.string(),
  policyId: z.string().nullable(),
  spend: ZTokenAmount.extend({
    destination: z.strictObject({ type: z.literal('upa'), accountId: z.string() }),
    paymentId: z.string().nullable(),
  }),
  decision: z.enum(['allow', 'deny', 'requires_approval']).meta({
    description:
      'What authorizing this spend would answer now: allow, or deny with the first failed rule. requires_approval is ' +
      'kept for a policy rule that asks an approval per spend; no policy has one today.',
  }),
  reasonCode: z.enum(FUNDING_REFUSALS).nullable(),
  rules: z.array(ZVaultPolicyRuleResult),
  /** The active policy's limit and its current period, as the vault's spendPeriod shows it; null without an active policy. */
  spendLimit: z
    .strictObject({
      amountAtomic: z.string(),
      currency: z.string(),
      decimals: z.number().int(),
      period: z.literal('fixed_30_day'),
      startsAt: ZDateTime,
      endsAt: ZDateTime,
      authorizedAtomic: z.string(),
      remainingAtomic: z.string(),
    })
    .nullable(),
  approvalRequired: z.boolean(),
  evaluatedAt: ZDateTime,
});
export type TVaultPolicyEvaluation = z.infer<typeof ZVaultPolicyEvaluation>;
export const ZVaultPolicyEvaluationResponse = z.strictObject({ evaluation: ZVaultPolicyEvaluation });

/**
 * Who made an audited change (spec: `partner_app` is a call made with the partner's app credentials;
 * other values are service-initiated). docs/decisions/api-conventions.md "Contract conformance".
 */
export const VAULT_ACTOR_TYPES = ['partner_app', 'service', 'client'] as const;
export const ZVaultActor = z.strictObject({
  type: z.enum(VAULT_ACTOR_TYPES).meta({
    description:
      "partner_app: a call made with the partner's app credentials (id: the app id). Other values are service-initiated: " +
      "service, the service's own step such as the funding transfer (id: null); client, a payer's authorization through the " +
      "client API or the hosted checkout, not the partner's app credentials (id: the payer's account id).",
  }),
  id: z.string().nullable(),
});

export const ZVaultAuditEvent = z.strictObject({
  id: z.string().regex(/^vault_evt_[A-Za-z0-9]+$/),
  vaultId: z.string(),
  policyId: z.string().nullable(),
  eventType: z.string(),
  actor: ZVaultActor,
  payload: z.record(z.string(), z.unknown()),
  createdAt: ZDateTime,
});
export type TVaultAuditEvent = z.infer<typeof ZVaultAuditEvent>;
export type TVaultActor = z.infer<typeof ZVaultActor>;

export const ZVaultAuditEventList = z.strictObject({
  data: z.array(ZVaultAuditEvent),
  nextCursor: z.string().optional(),
});

export const ZVaultApprovalSent = z.strictObject({
  approval: z.strictObject({
    policyId: z.string(),
    method: z.literal('email_otp'),
    /** The address, masked (a***@example.com). */
    sentTo: z.string(),
    expiresAt: ZDateTime,
    attemptsAllowed: z.number().int(),
  }),
});

export const ZFundingOperation = z.strictObject({
  id: z.string().regex(/^pay_funding_[A-Za-z0-9]+$/),
  status: z.enum(['authorized', 'broadcast', 'confirmed', 'failed']),
  statusVersion: z.number().int(),
  commercialFeeMode: z.literal('parent_payment'),
  transactionHash: z.string().nullable(),
  authorizedAt: ZDateTime.nullable(),
  broadcastAt: ZDateTime.nullable(),
  confirmedAt: ZDateTime.nullable(),
  expiresAt: ZDateTime.nullable(),
});
export type TFundingOperation = z.infer<typeof ZFundingOperation>;
