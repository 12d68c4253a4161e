import {
  ZCreatePublicPayment,
  ZCreatePublicPaymentResponse,
  ZPublicIdempotencyKey,
  ZPublicPaymentConfiguration,
} from '../../domain/payments/public-payment.schemas';
import { ZAppPath } from '../routes/public-payments';
import { publicPaymentConfigurationExample, publicPaymentExample } from './examples';
import { operation, type OpenApiPaths } from './operation';

/** src/http/routes/public-payments.ts: no credential; a payer's wallet calls them, limited per client IP. */
const common = { tags: ['Public Payments'], auth: 'none', svcVersion: true, path: ZAppPath } as const;

export const publicPaymentPaths: OpenApiPaths = {
  '/v2/public/apps/{appId}/payments/configuration': {
    get: operation({
      ...common,
      operationId: 'getPublicPaymentConfiguration',
      summary: "What a payer's wallet may create for this app: destinations, amounts, fiat currencies, TTL",
      responses: {
        200: {
          description: 'The public Payment configuration.',
          schema: ZPublicPaymentConfiguration,
          example: publicPaymentConfigurationExample,
        },
      },
      errors: [424, 429, 500, 503],
    }),
  },
  '/v2/public/apps/{appId}/payments': {
    post: operation({
      ...common,
      operationId: 'createPublicPayment',
      summary: "Create a receive Payment to an account's payment handle (no account id is ever shown)",
      idempotency: 'required',
      idempotencyKey: ZPublicIdempotencyKey,
      body: {
        schema: ZCreatePublicPayment,
        example: {
          recipient: { handle: 'cornerbakery1' },
          amount: '25.00',
          chainId: 31337,
          assetSymbol: 'USDC',
          fiatCurrency: 'USD',
          description: 'Two loaves',
        },
      },
      responses: {
        201: {
          description: 'The payer’s view of the new Payment, its checkout and what to send.',
          schema: ZCreatePublicPaymentResponse,
          example: publicPaymentExample,
        },
      },
      errors: [422, 424, 429, 500, 503],
    }),
  },
};
