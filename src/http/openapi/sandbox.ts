import { ZAdvanceClock, ZSandboxClockResponse } from '../../domain/sandbox/sandbox-clock.schemas';
import { ZAccountPath } from '../routes/accounts';
import { ZPaymentPath } from '../routes/payments';
import { EXAMPLE, PAYMENT_ID } from './examples';
import { operation, type OpenApiPaths } from './operation';

const clockExample = (resourceType: 'payment' | 'vault_policy_approval', resourceId: string, seconds: number) => ({
  sandboxClock: {
    object: 'sandbox_clock',
    resourceType,
    resourceId,
    moveId: 'clock_move_4Jd8Qm2Lx7',
    seconds,
    advancedSeconds: seconds,
    clockTime: '2026-11-30T10:15:00.000Z',
    createdAt: EXAMPLE.AT,
  },
});

const NOT_SANDBOX = 'Sandbox credentials only: production credentials get 404 not_found.';

/** src/http/routes/sandbox.ts */
export const sandboxPaths: OpenApiPaths = {
  '/v2/sandbox/payments/{paymentId}/advance-clock': {
    post: operation({
      operationId: 'advancePaymentClock',
      summary: "Move a sandbox Payment's clock forward (its expiry, its quotes)",
      description: `${NOT_SANDBOX} The Payment's workflow then decides on its own timers as it would that many seconds later: advanced to one second before \`expiresAt\`, the Payment expires a second later, with the events of any expiry. Moves add up; each is a \`sandbox.clock_advanced\` event on the Payment. Only an open Payment (\`requires_payment_method\` or \`processing\`) has a clock left to move: any other answers 409 payment_not_open.`,
      tags: ['Sandbox'],
      auth: 'app',
      scope: 'v2:payments',
      path: ZPaymentPath,
      idempotency: 'required',
      body: { schema: ZAdvanceClock, example: { seconds: 60 } },
      responses: {
        200: {
          description: "Where the Payment's clock stands.",
          schema: ZSandboxClockResponse,
          example: clockExample('payment', PAYMENT_ID, 60),
        },
      },
      errors: [409],
    }),
  },
  '/v2/sandbox/accounts/{accountId}/vault/policy/approval/advance-clock': {
    post: operation({
      operationId: 'advanceVaultApprovalClock',
      summary: "Move the clock of a sandbox vault policy's approval forward (its codes' expiry)",
      description: `${NOT_SANDBOX} The codes sent for the policy waiting for approval expire as they would that many seconds later (a code lives 10 minutes). Moves add up; each is a \`sandbox.clock_advanced\` event on the vault and a row of its audit. No policy waiting for approval answers 409 conflict (no_pending_policy).`,
      tags: ['Sandbox'],
      auth: 'app',
      scope: 'v2:vaults',
      path: ZAccountPath,
      idempotency: 'required',
      body: { schema: ZAdvanceClock, example: { seconds: 300 } },
      responses: {
        200: {
          description: "Where the approval's clock stands.",
          schema: ZSandboxClockResponse,
          example: clockExample('vault_policy_approval', 'vault_policy_8Kq2Wn5Rt1', 300),
        },
      },
      errors: [409],
    }),
  },
};
