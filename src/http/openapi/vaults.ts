import { ZEmptyBody } from '../../domain/requests/validation';
import {
  ZCreateVault,
  ZListVaultAuditEventsQuery,
  ZPutVaultPolicy,
  ZVaultApprovalSent,
  ZEvaluateVaultPolicy,
  ZVaultAuditEventList,
  ZVaultPolicyEvaluationResponse,
  ZVaultResponse,
  ZVerifyVaultApproval,
} from '../../domain/vaults/vault.schemas';
import { ZAccountPath } from '../routes/accounts';
import { ZVaultPath } from '../routes/vaults';
import { ACCOUNT_ID, EXAMPLE, policyEvaluationExample, spendPeriodExample, vaultExample } from './examples';
import { operation, type OpenApiPaths } from './operation';

/** src/http/routes/vaults.ts: every route answers 424 when vaults are not set up for the environment. */
const common = { tags: ['Vaults'], auth: 'app', scope: 'v2:vaults', path: ZAccountPath } as const;
const vault = (description: string, example?: unknown) => ({ description, schema: ZVaultResponse, example });

export const vaultPaths: OpenApiPaths = {
  '/v2/accounts/{accountId}/vault': {
    post: operation({
      ...common,
      operationId: 'createVault',
      summary: "Create the account's vault (201 new, 200 existing)",
      idempotency: 'optional',
      body: { schema: ZCreateVault, example: { chainId: EXAMPLE.CHAIN_ID } },
      responses: { 201: vault('The new vault.', { vault: { ...vaultExample, pendingPolicy: null } }), 200: vault('The existing vault.') },
      errors: [409, 424, 502],
    }),
    get: operation({
      ...common,
      operationId: 'getVault',
      summary: "Get the account's vault with its balances",
      responses: { 200: vault('The vault.') },
      errors: [424, 502],
    }),
  },
  '/v2/accounts/{accountId}/vault/policy': {
    put: operation({
      ...common,
      operationId: 'putVaultPolicy',
      summary: 'Propose a spending policy (active once approved by email)',
      idempotency: 'optional',
      body: {
        schema: ZPutVaultPolicy,
        example: {
          spendLimit: { amountAtomic: '500000000' },
          period: 'fixed_30_day',
          allowedTokens: [{ chainId: EXAMPLE.CHAIN_ID, tokenAddress: EXAMPLE.TOKEN }],
          managedApproval: { method: 'email_otp', email: 'payer@example.com' },
        },
      },
      responses: { 200: vault('The vault with its pending policy.', { vault: vaultExample }) },
      errors: [409, 424, 502],
    }),
  },
  '/v2/accounts/{accountId}/vault/policy/approval': {
    post: operation({
      ...common,
      operationId: 'sendVaultPolicyApproval',
      summary: 'Email the one-time code that approves the pending policy',
      body: { schema: ZEmptyBody, example: {} },
      responses: {
        201: {
          description: 'The code was sent.',
          schema: ZVaultApprovalSent,
          example: {
            approval: {
              policyId: 'vault_policy_3Nf8',
              method: 'email_otp',
              sentTo: 'p***@example.com',
              expiresAt: EXAMPLE.LATER,
              attemptsAllowed: 5,
            },
          },
        },
      },
      errors: [409, 424],
    }),
  },
  '/v2/accounts/{accountId}/vault/policy/approval/verify': {
    post: operation({
      ...common,
      operationId: 'verifyVaultPolicyApproval',
      summary: 'Approve the pending policy with the emailed code',
      body: { schema: ZVerifyVaultApproval, example: { code: '482913' } },
      responses: {
        200: vault('The vault with its policy active.', {
          vault: {
            ...vaultExample,
            policy: { ...vaultExample.pendingPolicy, status: 'active', activatedAt: EXAMPLE.AT },
            pendingPolicy: null,
            spendPeriod: spendPeriodExample,
          },
        }),
      },
      errors: [409, 422, 424, 502],
    }),
  },
  '/v2/vaults/{vaultId}/policy/evaluate': {
    post: operation({
      ...common,
      path: ZVaultPath,
      operationId: 'evaluateVaultPolicy',
      summary: "Dry-run a spend against the vault's policy (nothing is reserved or written)",
      description:
        "Answers what authorizing this spend from the vault would decide now: every rule's verdict, the first failed rule's " +
        "reasonCode (the one the Vault option's authorize would answer in a 422), and the spend limit left in the current " +
        'period. It reads the same facts and applies the same rules as the authorization, but locks, reserves and writes ' +
        'nothing, so the answer is advisory: the authorization decides again. With a paymentId the spend must be that ' +
        "Payment's (amount, asset, chain and recipient; else 400) and its state is weighed too. No Idempotency-Key: a " +
        'retry evaluates again.',
      body: {
        schema: ZEvaluateVaultPolicy,
        example: {
          amount: '25.00',
          assetCode: 'USDC',
          chainId: EXAMPLE.CHAIN_ID,
          destination: { type: 'upa', accountId: ACCOUNT_ID },
          paymentId: 'payment_2Vt7Hc4Mz8',
        },
      },
      responses: {
        200: {
          description: 'The decision and each rule, allow or deny alike.',
          schema: ZVaultPolicyEvaluationResponse,
          example: { evaluation: policyEvaluationExample },
        },
      },
      errors: [422, 424, 502],
    }),
  },
  '/v2/accounts/{accountId}/vault/audit-events': {
    get: operation({
      ...common,
      operationId: 'listVaultAuditEvents',
      summary: "The vault's audit trail, newest first",
      query: ZListVaultAuditEventsQuery,
      responses: { 200: { description: 'A page of audit events.', schema: ZVaultAuditEventList } },
      errors: [409, 424],
    }),
  },
};
