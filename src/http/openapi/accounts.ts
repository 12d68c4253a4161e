import {
  ZAccountBundle,
  ZAccountCapabilities,
  ZCreateAccount,
  ZRegisterConnectedWallet,
  ZSetSettlementProfile,
  ZUpdateDisplayProfile,
  ZUpdatePaymentAcceptance,
} from '../../domain/accounts/account.schemas';
import { ZAccountPath, ZExternalUserPath } from '../routes/accounts';
import { EXAMPLE, accountBundleExamples } from './examples';
import { operation, type OpenApiPaths } from './operation';

/** src/http/routes/accounts.ts */
const common = { tags: ['Accounts'], auth: 'app', scope: 'v2:accounts' } as const;
const bundle = (description: string, example?: unknown) => ({ description, schema: ZAccountBundle, example });

export const accountPaths: OpenApiPaths = {
  '/v2/accounts': {
    post: operation({
      ...common,
      operationId: 'createAccount',
      summary: 'Create an account (UPA) for one of your users',
      idempotency: 'optional',
      body: { schema: ZCreateAccount, example: { externalUserId: 'user-1842', subjectType: 'individual', metadata: {} } },
      responses: { 201: bundle('The new account bundle.', accountBundleExamples.created) },
      errors: [409],
    }),
  },
  '/v2/accounts/external/{externalUserId}': {
    get: operation({
      ...common,
      operationId: 'getAccountByExternalUserId',
      summary: 'Get an account by your user id',
      path: ZExternalUserPath,
      responses: { 200: bundle('The account bundle.') },
    }),
  },
  '/v2/accounts/{accountId}': {
    get: operation({
      ...common,
      operationId: 'getAccount',
      summary: 'Get an account',
      path: ZAccountPath,
      responses: { 200: bundle('The account bundle.') },
    }),
  },
  '/v2/accounts/{accountId}/capabilities': {
    get: operation({
      ...common,
      operationId: 'getAccountCapabilities',
      summary: 'What the account can do in this environment',
      path: ZAccountPath,
      responses: { 200: { description: 'The account capabilities.', schema: ZAccountCapabilities } },
    }),
  },
  '/v2/accounts/{accountId}/display-profile': {
    put: operation({
      ...common,
      operationId: 'updateDisplayProfile',
      summary: 'Set the name and logo payers see (future Payments only)',
      path: ZAccountPath,
      body: {
        schema: ZUpdateDisplayProfile,
        example: { displayName: 'Corner Bakery', expectedVersion: 0, reason: 'Shop name at onboarding' },
      },
      responses: { 200: bundle('The account bundle.', accountBundleExamples.named) },
      errors: [409],
    }),
  },
  '/v2/accounts/{accountId}/payment-acceptance': {
    put: operation({
      ...common,
      operationId: 'updatePaymentAcceptance',
      summary: 'Turn public Payments to this account on or off',
      description: 'Conditional on account.paymentAcceptance.version: a stale expectedVersion is 409.',
      path: ZAccountPath,
      body: { schema: ZUpdatePaymentAcceptance, example: { publicReceiveEnabled: true, expectedVersion: 1 } },
      responses: { 200: bundle('The account bundle.', accountBundleExamples.accepting) },
      errors: [409],
    }),
  },
  '/v2/accounts/{accountId}/connected-wallets': {
    post: operation({
      ...common,
      operationId: 'registerConnectedWallet',
      summary: 'Register a wallet the account holder controls',
      path: ZAccountPath,
      idempotency: 'optional',
      body: {
        schema: ZRegisterConnectedWallet,
        example: { kind: 'evm', chainId: EXAMPLE.CHAIN_ID, address: EXAMPLE.WALLET, label: 'Treasury' },
      },
      responses: { 201: bundle('The account bundle with the new wallet.', accountBundleExamples.withWallet) },
      errors: [409, 424],
    }),
  },
  '/v2/accounts/{accountId}/settlement-profile': {
    put: operation({
      ...common,
      operationId: 'setSettlementProfile',
      summary: "Choose where the account's funds settle",
      path: ZAccountPath,
      body: { schema: ZSetSettlementProfile, example: { connectedWalletId: 'wallet_6Hq2Rt', assetSymbol: 'USDC' } },
      responses: {
        200: bundle('The account bundle with its settlement profile.', accountBundleExamples.settled),
      },
      errors: [409, 422, 424],
    }),
  },
};
