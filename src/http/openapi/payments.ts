import {
  ZCancelPayment,
  ZCreatePayment,
  ZCreatePaymentResponse,
  ZListPaymentsQuery,
  ZPaymentList,
  ZPaymentResponse,
} from '../../domain/payments/payment.schemas';
import { ZPaymentPath } from '../routes/payments';
import { ACCOUNT_ID, EXAMPLE, checkoutExample, nextActionExample, paymentExample } from './examples';
import { operation, type OpenApiPaths } from './operation';

/** src/http/routes/payments.ts */
const common = { tags: ['Payments'], auth: 'app', scope: 'v2:payments' } as const;

export const paymentPaths: OpenApiPaths = {
  '/v2/payments': {
    post: operation({
      ...common,
      operationId: 'createPayment',
      summary: 'Create a Payment (receive into escrow, or send from an account)',
      description:
        'checkout.clientSecret is returned on creation (and on an exact replay) only; the payer-facing page is checkout.paymentUrl.',
      idempotency: 'required',
      body: {
        schema: ZCreatePayment,
        example: {
          intent: 'receive',
          amount: '25.00',
          assetCode: 'USDC',
          chainId: EXAMPLE.CHAIN_ID,
          destination: { type: 'upa', accountId: ACCOUNT_ID },
          expiresInSeconds: 600,
          externalReference: 'order-4711',
          description: 'Two loaves',
          metadata: { orderId: '4711' },
          returnUrl: 'https://shop.example.com/orders/4711',
        },
      },
      responses: {
        201: {
          description: 'The new Payment, its checkout and what the payer does next.',
          schema: ZCreatePaymentResponse,
          example: { payment: paymentExample, checkout: checkoutExample, nextAction: nextActionExample },
        },
      },
      errors: [404, 409, 422, 424, 502],
    }),
    get: operation({
      ...common,
      operationId: 'listPayments',
      summary: 'List Payments, newest first (filter by externalReference, status, creation time)',
      query: ZListPaymentsQuery,
      responses: { 200: { description: 'A page of Payments.', schema: ZPaymentList } },
    }),
  },
  '/v2/payments/{paymentId}': {
    get: operation({
      ...common,
      operationId: 'getPayment',
      summary: 'Get a Payment',
      path: ZPaymentPath,
      responses: { 200: { description: 'The Payment and its next action.', schema: ZPaymentResponse } },
    }),
  },
  '/v2/payments/{paymentId}/cancel': {
    post: operation({
      ...common,
      operationId: 'cancelPayment',
      summary: 'Cancel an unpaid receive Payment',
      path: ZPaymentPath,
      idempotency: 'optional',
      body: { schema: ZCancelPayment, example: { reasonCode: 'customer_request', reason: 'The customer changed their mind' } },
      responses: {
        200: {
          description: 'The cancelled Payment (a replay on a cancelled Payment answers the same).',
          schema: ZPaymentResponse,
          example: {
            payment: { ...paymentExample, status: 'cancelled', stage: null, statusVersion: 2, cancelledAt: EXAMPLE.AT },
            nextAction: null,
          },
        },
      },
      errors: [409, 502],
    }),
  },
};
