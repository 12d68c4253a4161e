import { z } from 'zod';
import { ZCallback } from '../../offramp/sandbox-provider/contract';
import { ZCallbackReceived } from '../routes/provider-callbacks';
import { EXAMPLE } from './examples';
import { operation, type OpenApiPaths } from './operation';

/** src/http/routes/provider-callbacks.ts: the off-ramp provider's signed callbacks (not called by partners). */
export const providerCallbackPaths: OpenApiPaths = {
  '/v2/providers/{providerCode}/callbacks': {
    post: operation({
      operationId: 'receiveProviderCallback',
      summary: "The off-ramp provider's signed callbacks (payouts, bank account verification)",
      description:
        'Called by the provider, not by partners. The signature is checked over the exact bytes before anything is parsed. A callback is a hint: the payout or bank account it names is read from the provider and that answer is applied, never the body. A 503 (the provider could not be read, or the update not applied) asks the provider to send it again.',
      tags: ['Provider callbacks'],
      auth: 'provider',
      path: z.object({ providerCode: z.string().meta({ description: 'The provider of this environment', example: 'sandbox' }) }),
      body: {
        schema: ZCallback,
        example: {
          id: 'cb_1',
          type: 'bank_account.updated',
          createdAt: EXAMPLE.AT,
          data: {
            bankAccountId: 'bank_account_7Yt2Kq',
            providerAccountId: 'pba_1',
            status: 'verified',
            failureReason: null,
            accountNumberLast4: '6789',
          },
        },
      },
      responses: { 200: { description: 'Handled.', schema: ZCallbackReceived, example: { received: true } } },
      withoutErrors: [415],
    }),
  },
};
