import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { PaymentEngine } from '../../domain/engine/pure/engine';
import type { IdempotencyRecords } from '../../domain/requests/idempotency-records';
import { parseInput } from '../../domain/requests/validation';
import { advanceApprovalClock, advancePaymentClock, requireSandbox } from '../../domain/sandbox/sandbox-clock';
import { ZAdvanceClock } from '../../domain/sandbox/sandbox-clock.schemas';
import { requireApp, type ApiContext, type ApiRouter } from '../context';
import { idempotent } from '../middleware/idempotency';
import { requireAccess } from '../middleware/modules';
import { ZAccountPath } from './accounts';
import { ZPaymentPath } from './payments';

export interface SandboxRouteDeps {
  prisma: PrismaClient;
  idempotency: IdempotencyRecords;
  engine: Pick<PaymentEngine, 'advancePaymentClock'>;
  chains: Pick<ChainRegistry, 'network'>;
}

/** The move's Idempotency-Key and request hash (a move is required to carry one: moves add up). */
function requestOf(ctx: ApiContext) {
  const request = ctx.state.idempotency;
  if (!request) throw new Error('a sandbox clock move runs under its Idempotency-Key');
  return request;
}

/** Production credentials get 404 before anything else (a module off in production would say 424). */
const sandboxOnly = async (ctx: ApiContext, next: () => Promise<unknown>) => {
  requireSandbox(requireApp(ctx));
  await next();
};

/** Sandbox clocks (src/domain/sandbox/sandbox-clock.ts): each under its resource's own scope and module. */
export function registerSandboxRoutes(router: ApiRouter, deps: SandboxRouteDeps): void {
  const once = idempotent(deps.idempotency, { required: true });
  const clockDeps = {
    prisma: deps.prisma,
    engine: deps.engine,
    confirmationsOf: (chainId: number) => deps.chains.network(chainId).confirmations,
  };

  router.post(
    '/v2/sandbox/payments/:paymentId/advance-clock',
    sandboxOnly,
    ...requireAccess('v2:payments', 'payments'),
    once,
    async (ctx) => {
      const { paymentId } = parseInput(ZPaymentPath, ctx.params, 'path');
      const input = parseInput(ZAdvanceClock, ctx.state.body, 'body');
      ctx.body = { sandboxClock: await advancePaymentClock(clockDeps, requireApp(ctx), paymentId, input, requestOf(ctx)) };
    },
  );

  router.post(
    '/v2/sandbox/accounts/:accountId/vault/policy/approval/advance-clock',
    sandboxOnly,
    ...requireAccess('v2:vaults', 'vaults'),
    once,
    async (ctx) => {
      const { accountId } = parseInput(ZAccountPath, ctx.params, 'path');
      const input = parseInput(ZAdvanceClock, ctx.state.body, 'body');
      ctx.body = { sandboxClock: await advanceApprovalClock(deps.prisma, requireApp(ctx), accountId, input, requestOf(ctx)) };
    },
  );
}
