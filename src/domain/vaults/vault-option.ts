import type { ChainRegistry } from '../../chain/registry';
import type { PrismaClient } from '../../db/client';
import type { ClientPrincipal } from '../client-auth/access-tokens';
import type { VaultFundingEngine } from '../engine/pure/engine';
import { ApiError, notFound } from '../requests/errors';
import { assertSameRequest, type IdempotentRequest } from '../requests/idempotency-records';
import { loadPayable } from '../payments/client-payments';
import { consumeAction, findAction, issueAction } from '../payments/payment-actions';
import {
  isPaymentOptionId,
  optionTerms,
  paymentOptionId,
  WALLET_TRANSFER_METHOD,
  type PaymentOptionContext,
  type PaymentOptionProvider,
} from '../payments/payment-options';
import { ZPaymentOption, type TPaymentOption } from '../payments/payment-option.schemas';
import type { PaymentRow } from '../payments/payment-view';
import type { TAuthorizeVaultOption } from '../payments/client-payment.schemas';
import { assertOptionUsable } from '../payments/quote-expiry';
import type { TEnvironments } from '../../config/environments';
import { availableVaultsSetup } from '../apps/modules';
import { vaultNetwork } from './vault-config';
import { authorizeVaultFunding, toFundingOperationView, vaultOptionFor, type VaultOption } from './vault-funding';
import type { ServiceSecret } from '../keys/service-keys';

/** The payment method of the Vault option: the payer's vault sends the exact amount to the escrow. */
export const VAULT_METHOD = 'vault';
/** The scope the Vault option's authorize needs of the token's app (beside v2:payments). */
export const VAULTS_SCOPE = 'v2:vaults';

type FundingRow = NonNullable<Awaited<ReturnType<PrismaClient['vaultFundingOperation']['findFirst']>>>;

/** The payer's live (not failed) funding of this Payment from its vault, if it authorized one. */
function liveFunding(prisma: PrismaClient, paymentId: string, accountId: string): Promise<FundingRow | null> {
  return prisma.vaultFundingOperation.findFirst({
    where: { paymentId, accountId, status: { not: 'failed' } },
    orderBy: { authorizedAt: 'desc' },
  });
}

function optionStatus(p: PaymentRow, funding: FundingRow | null): TPaymentOption['status'] {
  if (!funding) return 'available';
  return funding.status === 'confirmed' && (p.status === 'succeeded' || p.status === 'accepted') ? 'completed' : 'processing';
}

/**
 * The Vault option of a receive Payment for one payer: offered while the payer's vault can pay it
 * (vaultOptionFor: an active policy allowing the token, the period's limit and the available balance
 * cover the amount) and the app holds v2:vaults (authorize's scope), and shown while a funding it
 * authorized is under way. Its execution is a managed_authorization action, sent back to authorize.
 */
async function vaultOption(deps: { chains: Pick<ChainRegistry, 'get'> }, ctx: PaymentOptionContext): Promise<TPaymentOption[]> {
  const p = ctx.payment;
  if (p.intent !== 'receive' || !p.escrowAddress) return [];
  const funding = await liveFunding(ctx.prisma, p.id, ctx.accountId);
  const offer: VaultOption | null =
    funding || !ctx.scopes.includes(VAULTS_SCOPE)
      ? null
      : await vaultOptionFor({ prisma: ctx.prisma, chains: deps.chains }, { paymentId: p.id, payerAccountId: ctx.accountId, now: ctx.now });
  if (!funding && !offer) return [];
  const id = paymentOptionId(ctx.serviceSecret, p.id, VAULT_METHOD);
  const action = offer
    ? await issueAction(
        ctx.prisma,
        { paymentId: p.id, optionId: id, accountId: ctx.accountId, proofType: 'managed_authorization', expiresAt: p.expiresAt },
        ctx.now,
      )
    : null;
  const required = BigInt(p.amountAtomic.toString());
  const paid = funding?.status === 'confirmed' ? required : 0n;
  const vaultId = funding?.vaultId ?? offer!.vaultId;
  return [
    ZPaymentOption.parse({
      id,
      providerCode: 'vault',
      paymentMethodType: VAULT_METHOD,
      paymentMethodId: vaultId,
      type: 'vault_transfer',
      displayName: `Pay ${p.assetCode} from your vault`,
      status: optionStatus(p, funding),
      selectionStatus: funding ? 'selected' : 'not_selected',
      requiredAmountAtomic: required.toString(),
      paidAmountAtomic: paid.toString(),
      remainingAmountAtomic: (required - paid).toString(),
      isTerminal: funding?.status === 'confirmed',
      // The vault's transfer is confirmed by the chain like any payer's; the service is its provider.
      confirmationMode: 'provider_webhook',
      transactionSubmissions: funding?.transactionHash
        ? [
            {
              transactionHash: funding.transactionHash,
              chainId: p.chainId,
              amountAtomic: required.toString(),
              status: funding.status,
              submittedAt: (funding.broadcastAt ?? funding.authorizedAt).toISOString(),
            },
          ]
        : [],
      ...optionTerms(p, action),
      receipts:
        funding?.status === 'confirmed' && funding.transactionHash && funding.confirmedAt
          ? [
              {
                type: 'transaction' as const,
                transactionHash: funding.transactionHash,
                chainId: p.chainId,
                amountAtomic: required.toString(),
                confirmedAt: funding.confirmedAt.toISOString(),
              },
            ]
          : [],
    }),
  ];
}

/** The Vault option as a checkout option provider (createApi's client.extraOptions). */
export function vaultOptionProvider(deps: { chains: Pick<ChainRegistry, 'get'> }): PaymentOptionProvider {
  return (ctx) => vaultOption(deps, ctx);
}

export interface AuthorizeVaultOptionDeps {
  prisma: PrismaClient;
  serviceSecret: ServiceSecret;
  environments: TEnvironments;
  chains: Pick<ChainRegistry, 'get'>;
  engine: VaultFundingEngine;
}

/**
 * POST /v2/client/me/payments/{paymentId}/options/{optionId}/authorize. The funding is authorized
 * first (idempotent per Payment, under its lock), then the action is used, recording the request
 * (its Idempotency-Key and hash) and the funding: a retry after a crash between the two finds the
 * same operation and uses the action then; the identical retry after a 5xx once it was used (its
 * workflow's start failed) is answered with that funding (authorizedEarlier), and the reconciliation
 * pass starts any left unstarted (vault-funding-recovery.ts). Its workflow moves the funds; the
 * Payment advances only when its own verification sees them arrive.
 */
export async function authorizeVaultOption(
  deps: AuthorizeVaultOptionDeps,
  principal: ClientPrincipal,
  paymentId: string,
  optionId: string,
  input: TAuthorizeVaultOption,
  opts: { request?: IdempotentRequest; now?: Date } = {},
) {
  const now = opts.now ?? new Date();
  const { prisma } = deps;
  const payment = await loadPayable(prisma, principal, paymentId, 'payer');
  if (!isPaymentOptionId(deps.serviceSecret, paymentId, VAULT_METHOD, optionId)) {
    // A known option of another method (the direct transfer) is confirmed, not authorized.
    if (isPaymentOptionId(deps.serviceSecret, paymentId, WALLET_TRANSFER_METHOD, optionId)) {
      throw new ApiError('payment_method_not_supported', 'Only a Vault option is authorized; a wallet transfer is confirmed', {
        reasonCode: 'option_not_authorizable',
      });
    }
    throw notFound('Payment option');
  }
  // 424 when the app's environment runs no vaults, or not on this Payment's chain.
  const network = vaultNetwork(availableVaultsSetup(deps.environments.environments[principal.app.environment]), payment.chainId);
  if (!network) throw new ApiError('chain_config_missing', `Vaults are not configured on chain ${payment.chainId} for this environment`);
  const action = await findAction(prisma, input.actionId);
  if (!action || action.paymentId !== paymentId || action.accountId !== principal.accountId || action.optionId !== optionId)
    throw notFound('Action');
  if (action.usedAt) {
    const funding = await authorizedEarlier(deps, action, opts.request, network.confirmations);
    if (!funding)
      throw new ApiError('conflict', 'This actionId was already used; read the Payment for a new one', {
        reasonCode: 'action_already_used',
      });
    return answer(deps, principal, payment, funding.id, now);
  }
  assertOptionUsable(payment, now, 'authorization');
  if (action.expiresAt <= now)
    throw new ApiError('conflict', 'This actionId has expired; read the Payment for a new one', { reasonCode: 'action_expired' });

  const authorized = await authorizeVaultFunding(
    { prisma, chains: deps.chains },
    { paymentId, payerAccountId: principal.accountId, optionId, actor: { type: 'client', id: principal.accountId }, now },
  );
  const use = { actionId: action.id, proof: input.proof, metadata: input.metadata, request: opts.request };
  if (!(await consumeAction(prisma, { ...use, fundingOperationId: authorized.fundingOperation.id }, now))) {
    throw new ApiError('conflict', 'This actionId was already used; read the Payment for a new one', { reasonCode: 'action_already_used' });
  }
  await deps.engine.startVaultFunding(authorized.fundingOperation.id, network.confirmations);
  return answer(deps, principal, payment, authorized.fundingOperation.id, now);
}

/**
 * The funding an earlier try of this very request authorized when it used the action: a 5xx after
 * that (its workflow's start failed, or timed out) released the key, and the identical retry is
 * answered as the first success would have been. Its workflow is started if it has none: the
 * workflow id is the operation's, so one started by that try or by the reconciliation pass answers
 * 'exists'. Null when the action was used under another key (its use is final); the same key with
 * another request is a conflict.
 */
async function authorizedEarlier(
  deps: AuthorizeVaultOptionDeps,
  action: { idempotencyKey: string | null; requestHash: string | null; fundingOperationId: string | null },
  request: IdempotentRequest | undefined,
  confirmations: number,
): Promise<FundingRow | null> {
  if (!request || action.idempotencyKey !== request.key || !action.fundingOperationId) return null;
  assertSameRequest(action.requestHash, request);
  const funding = await deps.prisma.vaultFundingOperation.findUniqueOrThrow({ where: { id: action.fundingOperationId } });
  if (funding.status === 'authorized') await deps.engine.startVaultFunding(funding.id, confirmations);
  return funding;
}

async function answer(
  deps: AuthorizeVaultOptionDeps,
  principal: ClientPrincipal,
  payment: PaymentRow,
  fundingOperationId: string,
  now: Date,
) {
  const { prisma } = deps;
  const [option] = await vaultOption(deps, {
    prisma,
    serviceSecret: deps.serviceSecret,
    payment,
    accountId: principal.accountId,
    scopes: principal.app.scopes,
    now,
  });
  const row = await prisma.vaultFundingOperation.findUniqueOrThrow({ where: { id: fundingOperationId } });
  return { paymentId: payment.id, option: option!, fundingOperation: toFundingOperationView(row) };
}
