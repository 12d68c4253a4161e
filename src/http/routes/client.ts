import { z } from 'zod';
import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { PaymentEngine, VaultFundingEngine } from '../../domain/engine/pure/engine';
import type { TEnvironments } from '../../config/environments';
import { authorizeVaultOption, vaultOptionProvider, VAULTS_SCOPE } from '../../domain/vaults/vault-option';
import { ZPaymentOptionId } from '../../domain/payments/payment-option.schemas';
import type { IdempotencyRecords } from '../../domain/requests/idempotency-records';
import { exchangeClientToken, revokeClientTokens, verifyClientToken } from '../../domain/client-auth/access-tokens';
import { ZClientAccountRef } from '../../domain/client-auth/client-auth.schemas';
import { confirmClientPayment, readClientPayment, type ClientPaymentDeps } from '../../domain/payments/client-payments';
import { ZAuthorizeVaultOption, ZConfirmClientPayment } from '../../domain/payments/client-payment.schemas';
import type { PaymentOptionProvider } from '../../domain/payments/payment-options';
import { ZPaymentId } from '../../domain/payments/payment.schemas';
import { checkoutSecretSealing } from '../../domain/payments/payment-view';
import { parseInput } from '../../domain/requests/validation';
import { requireAccess, requireModule } from '../middleware/modules';
import { requireScope } from '../middleware/auth';
import { assertPaymentSecret, clientBearer } from '../middleware/client-auth';
import { idempotent } from '../middleware/idempotency';
import { requireApp, requireClient, type ApiMiddleware, type ApiRouter } from '../context';
import type { ServiceSecret } from '../../domain/keys/service-keys';

export interface ClientRouteDeps {
  prisma: PrismaClient;
  idempotency: IdempotencyRecords;
  serviceSecret: ServiceSecret;
  publicBaseUrl: string;
  /** Confirm reads the transaction a client names, and hands it to the Payment's workflow. */
  chains: ChainRegistry;
  engine: Pick<PaymentEngine, 'transferSeen'> & VaultFundingEngine;
  environments: TEnvironments;
  /** More checkout options (e.g. the Vault option), after the direct wallet transfer. */
  extraOptions?: readonly PaymentOptionProvider[];
}

export const ZClientPaymentPath = z.strictObject({ paymentId: ZPaymentId });
export const ZOptionPath = z.strictObject({ paymentId: ZPaymentId, optionId: ZPaymentOptionId });
const ZNoQuery = z.strictObject({});

/** POST /v2/client/auth/exchange and /revoke: partner routes (HTTP Basic, v2:payments scope) of the payments module. */
export function registerClientAuthRoutes(partner: ApiRouter, deps: Pick<ClientRouteDeps, 'prisma' | 'serviceSecret'>): void {
  const access = requireAccess('v2:payments', 'payments');
  // Not idempotent on purpose: a stored response would hold a token. Each call issues a new one.
  partner.post('/v2/client/auth/exchange', ...access, async (ctx) => {
    const ref = parseInput(ZClientAccountRef, ctx.state.body, 'body');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await exchangeClientToken(deps.prisma, deps.serviceSecret, requireApp(ctx), ref);
  });
  partner.post('/v2/client/auth/revoke', ...access, async (ctx) => {
    const ref = parseInput(ZClientAccountRef, ctx.state.body, 'body');
    ctx.body = await revokeClientTokens(deps.prisma, requireApp(ctx), ref);
  });
}

/** /v2/client/me/...: Bearer tokens only, on a router of their own (no Basic middleware runs here). */
export function registerClientRoutes(
  client: ApiRouter,
  deps: ClientRouteDeps,
  shared: { rateLimit: ApiMiddleware; jsonBody: ApiMiddleware; svcVersion: ApiMiddleware; modules: ApiMiddleware },
): void {
  client.use(clientBearer((token) => verifyClientToken(deps.prisma, deps.serviceSecret, token)));
  client.use(shared.svcVersion);
  client.use(shared.rateLimit);
  client.use(shared.jsonBody);
  client.use(shared.modules);
  // Scopes of the token's app, then modules (403 before 424, as on partner routes), before the
  // idempotency record: every client route reads a Payment (v2:payments, the scope the exchange
  // needed); the Vault option's authorize moves a vault's funds too (v2:vaults).
  const payments = requireAccess('v2:payments', 'payments');
  // The Vault option is offered beside the direct one wherever the payer's vault can pay.
  const use: ClientPaymentDeps = { ...deps, extraOptions: [vaultOptionProvider(deps), ...(deps.extraOptions ?? [])] };

  client.get('/v2/client/me/payments/:paymentId', ...payments, async (ctx) => {
    const { paymentId } = parseInput(ZClientPaymentPath, ctx.params, 'path');
    assertPaymentSecret(ctx, deps.serviceSecret, paymentId);
    parseInput(ZNoQuery, ctx.query, 'query');
    ctx.body = await readClientPayment(use, requireClient(ctx), paymentId);
  });

  // The stored idempotent response never holds the clientSecret (a replay derives it again), and
  // each account's keys are its own.
  const { seal, unseal } = checkoutSecretSealing(deps.serviceSecret);
  const confirmIdempotency = idempotent(deps.idempotency, {
    required: false,
    seal,
    unseal,
    namespace: (ctx) => `client:${requireClient(ctx).accountId}`,
    // Not mined yet: the same request (same key) must succeed once it is.
    releaseOn: (err) => (err.details as { reasonCode?: string } | undefined)?.reasonCode === 'transaction_not_found',
  });

  client.post('/v2/client/me/payments/:paymentId/confirm', ...payments, confirmIdempotency, async (ctx) => {
    const { paymentId } = parseInput(ZClientPaymentPath, ctx.params, 'path');
    parseInput(ZNoQuery, ctx.query, 'query');
    const input = parseInput(ZConfirmClientPayment, ctx.state.body, 'body');
    ctx.body = await confirmClientPayment(use, requireClient(ctx), paymentId, input);
  });

  // The payment secret is checked before the idempotency record is read: a replay answers only the
  // holder of the Payment's secret.
  const paymentSecret: ApiMiddleware = async (ctx, next) => {
    const { paymentId } = parseInput(ZOptionPath, ctx.params, 'path');
    assertPaymentSecret(ctx, deps.serviceSecret, paymentId);
    await next();
  };
  const authorizeIdempotency = idempotent(deps.idempotency, {
    required: true,
    namespace: (ctx) => `client:${requireClient(ctx).accountId}`,
  });
  const vaults = [requireScope('v2:payments'), requireScope(VAULTS_SCOPE), requireModule('payments', 'vaults')];
  client.post(
    '/v2/client/me/payments/:paymentId/options/:optionId/authorize',
    ...vaults,
    paymentSecret,
    authorizeIdempotency,
    async (ctx) => {
      const { paymentId, optionId } = parseInput(ZOptionPath, ctx.params, 'path');
      parseInput(ZNoQuery, ctx.query, 'query');
      const input = parseInput(ZAuthorizeVaultOption, ctx.state.body, 'body');
      ctx.body = await authorizeVaultOption(deps, requireClient(ctx), paymentId, optionId, input, { request: ctx.state.idempotency });
    },
  );
}
