import type { Hash } from 'viem';
import type { PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import type { PaymentEngine } from '../engine/pure/engine';
import type { ClientPrincipal } from '../client-auth/access-tokens';
import { assertScope } from '../apps/apps';
import { ApiError, notFound } from '../requests/errors';
import { consumeAction, findAction } from './payment-actions';
import { claimPayer, isPayer } from './payment-payers';
import { assertOptionUsable } from './quote-expiry';
import { isPaymentOptionId, paymentOptions, WALLET_TRANSFER_METHOD, type PaymentOptionProvider } from './payment-options';
import { takePaymentTransfer } from './payment-intake';
import { PAYMENT_VIEW_INCLUDE, toCheckout, toNextAction, toPaymentView, type PaymentRow } from './payment-view';
import type { TConfirmClientPayment } from './client-payment.schemas';
import type { ServiceSecret } from '../keys/service-keys';
import type { TEnvironments } from '../../config/environments';
import { finalityOfOne } from '../chain/finality';

export interface ClientPaymentDeps {
  prisma: PrismaClient;
  serviceSecret: ServiceSecret;
  publicBaseUrl: string;
  chains: ChainRegistry;
  /** The networks' settings, for the Payment's finality. */
  environments: TEnvironments;
  engine: Pick<PaymentEngine, 'transferSeen'>;
  extraOptions?: readonly PaymentOptionProvider[];
}

/**
 * How a call meets the payer binding (payment-payers.ts): a read `claim`s an unbound Payment for the
 * token's account; a call that spends an action needs the account to be the `payer` already (its
 * action ids came from its read), so a refused confirm or authorize binds no one.
 */
export type PayerAccess = 'claim' | 'payer';

/**
 * The Payments a client token may act on: for an app holding v2:payments (the scope its exchange
 * needed; 403 otherwise), receive Payments of the token's app (so of its environment) whose payer is
 * the token's account. Anything else (another app's, a send Payment, one bound to
 * another account, the recipient's own) is the same "Payment not found", never "forbidden", so a token
 * learns nothing about a Payment that is not its own.
 */
export async function loadPayable(
  prisma: PrismaClient,
  principal: ClientPrincipal,
  paymentId: string,
  access: PayerAccess,
): Promise<PaymentRow> {
  assertScope(principal.app, 'v2:payments');
  const p = await prisma.payment.findFirst({
    where: { id: paymentId, appId: principal.app.id, intent: 'receive' },
    include: PAYMENT_VIEW_INCLUDE,
  });
  const bound =
    p && (access === 'claim' ? await claimPayer(prisma, p, principal.accountId) : await isPayer(prisma, p, principal.accountId));
  if (!p || !bound) throw notFound('Payment');
  return p;
}

async function view(deps: ClientPaymentDeps, p: PaymentRow) {
  const finality = await finalityOfOne(deps, { kind: 'payment', id: p.id }, new Date());
  return {
    payment: toPaymentView(p, finality),
    checkout: toCheckout(p, deps.serviceSecret, deps.publicBaseUrl),
    nextAction: toNextAction(p),
  };
}

/** GET /v2/client/me/payments/{paymentId} (the payment secret is checked by the route, before this). */
export async function readClientPayment(deps: ClientPaymentDeps, principal: ClientPrincipal, paymentId: string, now = new Date()) {
  const payment = await loadPayable(deps.prisma, principal, paymentId, 'claim');
  const options = await paymentOptions(
    { prisma: deps.prisma, serviceSecret: deps.serviceSecret, payment, accountId: principal.accountId, scopes: principal.app.scopes, now },
    deps.extraOptions,
  );
  return { ...(await view(deps, payment)), options };
}

/**
 * POST /v2/client/me/payments/{paymentId}/confirm. The action must have been issued to this account for
 * this Payment's direct option; the proof must be what the Payment's next action asks for. A
 * transaction is verified at once the way the chain scanner does it (takePaymentTransfer: recorded,
 * then handed to the Payment's workflow, which verifies and counts it), so the answer is the current
 * Payment, not a settlement.
 */
export async function confirmClientPayment(
  deps: ClientPaymentDeps,
  principal: ClientPrincipal,
  paymentId: string,
  input: TConfirmClientPayment,
  now = new Date(),
) {
  const { prisma } = deps;
  const payment = await loadPayable(prisma, principal, paymentId, 'payer');
  const action = await findAction(prisma, input.actionId);
  if (
    !action ||
    action.paymentId !== paymentId ||
    action.accountId !== principal.accountId ||
    !isPaymentOptionId(deps.serviceSecret, paymentId, WALLET_TRANSFER_METHOD, action.optionId)
  ) {
    throw notFound('Action');
  }
  if (action.usedAt)
    throw new ApiError('conflict', 'This actionId was already used; read the Payment for a new one', { reasonCode: 'action_already_used' });
  assertOptionUsable(payment, now, 'confirmation');
  const nextAction = toNextAction(payment);
  // Escrow funding is confirmed by the chain itself; only a transfer the payer still owes is an
  // outgoing execution a client can prove.
  if (nextAction?.type !== 'transaction') {
    throw new ApiError('conflict', 'This Payment is escrow-funded and has no outgoing execution to confirm', {
      reasonCode: 'payment_confirmation_not_supported',
    });
  }
  if (input.proof.type !== nextAction.type) {
    throw new ApiError('bad_request', `The Payment's next action asks for a ${nextAction.type} proof`, {
      reasonCode: 'proof_type_mismatch',
      fields: [{ field: 'body.proof.type', message: `must be ${nextAction.type}` }],
    });
  }
  if (action.expiresAt <= now)
    throw new ApiError('conflict', 'This actionId has expired; read the Payment for a new one', { reasonCode: 'action_expired' });

  const escrow = payment.escrowAddress!.toLowerCase();
  const token = payment.tokenAddress.toLowerCase();
  const transfers = (await deps.chains.get(payment.chainId).getTransactionTransfers(input.proof.transactionHash as Hash)).filter(
    (t) => t.to.toLowerCase() === escrow && t.token.toLowerCase() === token,
  );
  if (transfers.length === 0) {
    // Not consumed: once the transaction is mined, the same confirm succeeds.
    throw new ApiError('conflict', 'The transaction is not mined yet or pays nothing to this Payment; retry once it is mined', {
      reasonCode: 'transaction_not_found',
    });
  }
  if (!(await consumeAction(prisma, { actionId: action.id, proof: input.proof, metadata: input.metadata }, now))) {
    throw new ApiError('conflict', 'This actionId was already used; read the Payment for a new one', { reasonCode: 'action_already_used' });
  }
  for (const transfer of transfers) await takePaymentTransfer({ prisma, chains: deps.chains, engine: deps.engine }, transfer);
  return view(deps, await loadPayable(prisma, principal, paymentId, 'payer'));
}
