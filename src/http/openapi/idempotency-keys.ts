import { ZIdempotencyKeyPath, ZIdempotencyKeyView } from '../../domain/requests/idempotency-keys';
import { EXAMPLE, PAYMENT_ID } from './examples';
import { operation, type OpenApiPaths } from './operation';

/** src/http/routes/idempotency-keys.ts */
export const idempotencyKeyPaths: OpenApiPaths = {
  '/v2/idempotency-keys/{key}': {
    get: operation({
      operationId: 'getIdempotencyKey',
      summary: 'Look up an Idempotency-Key of this app: did the request that used it run, and what did it answer?',
      description:
        "For a request that timed out: `completed` (its answer is stored: read the resource, or retry identically to get the answer replayed), `in_flight` (still running: wait and look again), `released` (it failed or was refused before it ran: retry, corrected if need be, with the same key) or `unknown` (it never arrived: retry with the same key). Only the app's own keys, exactly as sent (percent-encode the key in the path). Any valid credential may call it, whatever its scopes.",
      tags: ['Idempotency keys'],
      auth: 'app',
      path: ZIdempotencyKeyPath,
      // No module's. A key no request used answers 200 unknown; a 404 is only a path that isn't this route.
      withoutErrors: [424],
      responses: {
        200: {
          description: 'What the service knows of the key.',
          schema: ZIdempotencyKeyView,
          example: {
            object: 'idempotency_key',
            key: 'order-4711-attempt-1',
            status: 'completed',
            request: {
              method: 'POST',
              path: '/v2/payments',
              bodySha256: 'a3f5c0e1b2d4968778695a4b3c2d1e0f9a8b7c6d5e4f30211203f4e5d6c7b8a9',
            },
            response: { status: 201, resourceId: PAYMENT_ID },
            createdAt: EXAMPLE.AT,
            completedAt: EXAMPLE.AT,
            releasedAt: null,
            lockExpiresAt: null,
          },
        },
      },
    }),
  },
};
