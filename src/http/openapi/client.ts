import { ZClientAccountRef, ZClientTokenResponse, ZClientTokenRevokeResponse } from '../../domain/client-auth/client-auth.schemas';
import {
  ZAuthorizeVaultOption,
  ZAuthorizeVaultOptionResponse,
  ZClientConfirmResponse,
  ZClientPaymentResponse,
  ZConfirmClientPayment,
} from '../../domain/payments/client-payment.schemas';
import { ZClientPaymentPath, ZOptionPath } from '../routes/client';
import {
  EXAMPLE,
  PAYMENT_ID,
  checkoutExample,
  fundingOperationExample,
  nextActionExample,
  paidPaymentExample,
  vaultOptionExample,
} from './examples';
import { operation, type OpenApiPaths } from './operation';

/** src/http/routes/client.ts: the token exchange (partner, Basic) and the client API (Bearer). */
const exchange = { tags: ['Client API'], auth: 'app', scope: 'v2:payments' } as const;
/** The client token's app must hold the scope (403 forbidden otherwise, before anything is read or written). */
const client = { tags: ['Client API'], auth: 'client', scope: 'v2:payments' } as const;

export const clientPaths: OpenApiPaths = {
  '/v2/client/auth/exchange': {
    post: operation({
      ...exchange,
      operationId: 'exchangeClientToken',
      summary: 'Issue a short-lived client token bound to one account',
      description: 'Not idempotent on purpose: each call issues a new token (a stored answer would hold one).',
      body: { schema: ZClientAccountRef, example: { accountId: EXAMPLE.PAYER_ACCOUNT_ID } },
      responses: {
        200: {
          description: 'The access token.',
          schema: ZClientTokenResponse,
          example: {
            accessToken: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhY2N0XzNMcjhUcTFOdzYifQ.c2lnbmF0dXJl',
            tokenType: 'Bearer',
            expiresAt: EXAMPLE.TOKEN_EXPIRY,
            expiresIn: 900,
            accountId: EXAMPLE.PAYER_ACCOUNT_ID,
          },
        },
      },
      errors: [404],
    }),
  },
  '/v2/client/auth/revoke': {
    post: operation({
      ...exchange,
      operationId: 'revokeClientTokens',
      summary: 'Revoke every client token of an account',
      body: { schema: ZClientAccountRef, example: { externalUserId: 'payer-77' } },
      responses: {
        200: {
          description: 'Tokens issued before revokedAt no longer work.',
          schema: ZClientTokenRevokeResponse,
          example: { accountId: EXAMPLE.PAYER_ACCOUNT_ID, revokedAt: EXAMPLE.AT },
        },
      },
      errors: [404],
    }),
  },
  '/v2/client/me/payments/{paymentId}': {
    get: operation({
      ...client,
      auth: 'client+paymentSecret',
      operationId: 'getClientPayment',
      summary: 'Read a Payment as its payer, with the checkout options',
      path: ZClientPaymentPath,
      responses: { 200: { description: 'The Payment, its checkout and the options the payer can use.', schema: ZClientPaymentResponse } },
    }),
  },
  '/v2/client/me/payments/{paymentId}/confirm': {
    post: operation({
      ...client,
      operationId: 'confirmClientPayment',
      summary: 'Tell the service which transaction paid the Payment',
      description: 'Answers the current Payment; it does not mean the Payment is settled.',
      path: ZClientPaymentPath,
      idempotency: 'optional',
      body: {
        schema: ZConfirmClientPayment,
        example: { actionId: 'action_5Tz1', proof: { type: 'transaction', transactionHash: EXAMPLE.TX_HASH }, metadata: {} },
      },
      responses: {
        200: {
          description: 'The Payment as it stands: the transfer is handed to the Payment, which moves on once it is confirmed.',
          schema: ZClientConfirmResponse,
          example: { payment: paidPaymentExample, checkout: checkoutExample, nextAction: nextActionExample },
        },
      },
      errors: [409, 422, 424, 502],
    }),
  },
  '/v2/client/me/payments/{paymentId}/options/{optionId}/authorize': {
    post: operation({
      ...client,
      auth: 'client+paymentSecret',
      operationId: 'authorizeVaultOption',
      summary: "Authorize the Vault option's transfer to escrow",
      description:
        "A successful answer does not mean the funds arrived: the Payment advances once the transfer is verified on-chain. The token's app needs `v2:payments` and `v2:vaults`.",
      scope: 'v2:vaults',
      path: ZOptionPath,
      idempotency: 'required',
      body: {
        schema: ZAuthorizeVaultOption,
        example: { actionId: 'vault_action_7Qe2', proof: { type: 'managed_authorization', authorization: 'approved' }, metadata: {} },
      },
      responses: {
        200: {
          description: 'The option and its funding operation.',
          schema: ZAuthorizeVaultOptionResponse,
          example: { paymentId: PAYMENT_ID, option: vaultOptionExample, fundingOperation: fundingOperationExample },
        },
      },
      errors: [409, 422, 424, 502],
    }),
  },
};
