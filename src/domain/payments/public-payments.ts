import { NO_FINALITY } from '../chain/finality.schemas';
import { findAsset, findNetwork, type TEnvironmentConfig, type TPublicPaymentsConfig } from '../../config/environments';
import type { PrismaClient } from '../../db/client';
import type { AuthenticatedApp } from '../apps/apps';
import { toAtomic } from '../amounts/amounts';
import { ApiError, notFound } from '../requests/errors';
import { InputError } from '../requests/validation';
import { amountAtomicOf, createPayment, type CreatePaymentDeps } from './create-payment';
import { paymentUrlFor, toNextAction, toPaymentView, type PaymentRow } from './payment-view';
import {
  ZPublicIdempotencyKey,
  type TCreatePublicPayment,
  type TCreatePublicPaymentResponse,
  type TPublicPaymentCreation,
} from './public-payment.schemas';

/** The payments module's state for the app (partner-config's moduleAvailability). */
export type ModuleState = { available: boolean; disabledReason: string | null };

export const publicCreateEndpoint = (appId: string) => `/v2/public/apps/${appId}/payments`;
export const publicConfigureEndpoint = (appId: string) => `/v2/public/apps/${appId}/payments/configuration`;

/** Why public creation is off for this app, or null when it is on. */
function offReason(env: TEnvironmentConfig, payments: ModuleState): string | null {
  if (!env.publicPayments?.enabled) return 'public_payments_disabled';
  return payments.available ? null : (payments.disabledReason ?? 'module_not_available');
}

/** capabilities.payments.publicPaymentCreation: the state the two public endpoints act on. */
export function publicPaymentCreation(app: AuthenticatedApp, env: TEnvironmentConfig, payments: ModuleState): TPublicPaymentCreation {
  const cfg = env.publicPayments;
  const reason = offReason(env, payments);
  const destinations = (cfg?.destinations ?? []).flatMap((d) => {
    const network = findNetwork(env, d.chainId);
    const asset = network && findAsset(network, d.assetSymbol);
    if (!network || !asset) return []; // the environment file's schema refuses this at start-up
    return [
      {
        chainId: network.chainId,
        networkCode: network.code,
        chainName: network.name ?? network.code,
        chainFamily: network.chainFamily,
        assetSymbol: asset.symbol,
        tokenAddress: asset.tokenAddress,
        decimals: asset.decimals,
        assetKind: asset.kind,
        logoUrl: d.logoUrl,
        minimumAmount: d.minimumAmount,
        maximumAmount: d.maximumAmount,
        available: reason === null,
        disabledReason: reason,
      },
    ];
  });
  return {
    enabled: reason === null,
    authentication: 'none',
    purpose: 'wallet_payment',
    methods: reason === null ? ['direct'] : [],
    destinations,
    allowedFiatCurrencies: [...(cfg?.allowedFiatCurrencies ?? [])],
    paymentTtlSeconds: cfg?.paymentTtlSeconds ?? 0,
    configureEndpoint: publicConfigureEndpoint(app.id),
    createEndpoint: publicCreateEndpoint(app.id),
  };
}

/**
 * Refuses when the environment or the app's payments module is off: 424 chain_config_missing (spec,
 * Authentication rule 3: a feature not configured for the app or environment).
 */
export function requirePublicPayments(env: TEnvironmentConfig, payments: ModuleState): TPublicPaymentsConfig {
  const reason = offReason(env, payments);
  if (reason !== null || !env.publicPayments) {
    throw new ApiError('chain_config_missing', 'Public Payment creation is not configured for this app', { reasonCode: reason });
  }
  return env.publicPayments;
}

/** GET .../configuration: the config's block, plus what a wallet needs to call create. */
export function publicPaymentConfiguration(app: AuthenticatedApp, env: TEnvironmentConfig, payments: ModuleState) {
  const cfg = requirePublicPayments(env, payments);
  return {
    appId: app.id,
    ...publicPaymentCreation(app, env, payments),
    recipientReference: 'payment_handle' as const,
    idempotencyKey: {
      required: true as const,
      minLength: ZPublicIdempotencyKey.minLength ?? 16,
      maxLength: ZPublicIdempotencyKey.maxLength ?? 256,
    },
    rateLimit: { scope: 'client_ip' as const, points: cfg.rateLimit.points, windowSeconds: cfg.rateLimit.windowSeconds },
  };
}

export interface PublicPaymentDeps extends CreatePaymentDeps {
  prisma: PrismaClient;
  publicBaseUrl: string;
}

/**
 * An anonymous payer's receive Payment to the account behind a payment handle, through the same
 * creation path (and Temporal start) as POST /v2/payments, marked origin 'public' so its events name
 * no account. Refusals create nothing: the destination and amount are checked against the
 * configuration first, and an unknown handle and an account that doesn't accept public Payments are
 * the same 404.
 */
export async function createPublicPayment(
  deps: PublicPaymentDeps,
  app: AuthenticatedApp,
  env: TEnvironmentConfig,
  cfg: TPublicPaymentsConfig,
  input: TCreatePublicPayment,
  request: { idempotencyKey: string; bodyHash: string },
): Promise<PaymentRow> {
  const destination = cfg.destinations.find((d) => d.chainId === input.chainId && d.assetSymbol === input.assetSymbol);
  const network = findNetwork(env, input.chainId);
  const asset = network && findAsset(network, input.assetSymbol);
  if (!destination || !asset) {
    throw new ApiError(
      'payment_method_not_supported',
      `${input.assetSymbol} on chain ${input.chainId} is not a destination for public Payments`,
      {
        reasonCode: 'destination_not_allowed',
      },
    );
  }
  const amountAtomic = amountAtomicOf(input.amount, asset.decimals);
  if (amountAtomic < toAtomic(destination.minimumAmount, asset.decimals)) {
    throw new ApiError('payment_amount_below_minimum', `The minimum for a public ${asset.symbol} Payment is ${destination.minimumAmount}`, {
      minimumAmount: destination.minimumAmount,
    });
  }
  if (amountAtomic > toAtomic(destination.maximumAmount, asset.decimals)) {
    throw new ApiError('payment_amount_above_maximum', `The maximum for a public ${asset.symbol} Payment is ${destination.maximumAmount}`, {
      maximumAmount: destination.maximumAmount,
    });
  }
  if (input.fiatCurrency && !cfg.allowedFiatCurrencies.includes(input.fiatCurrency)) {
    throw new InputError(`fiatCurrency must be one of ${cfg.allowedFiatCurrencies.join(', ') || '(none)'}`, [
      { field: 'body.fiatCurrency', message: 'not an allowed fiat currency' },
    ]);
  }

  // Handles are created in the app's namespace (the app id); an account that doesn't accept public
  // Payments answers as if it didn't exist.
  const handle = await deps.prisma.paymentHandle.findUnique({
    where: { namespace_handle: { namespace: app.id, handle: input.recipient.handle } },
    select: { status: true, account: { select: { id: true, appId: true, status: true, publicReceiveEnabled: true } } },
  });
  const account = handle?.status === 'active' ? handle.account : null;
  if (!account || account.appId !== app.id || account.status !== 'active' || !account.publicReceiveEnabled) throw notFound('Recipient');

  return createPayment(
    deps,
    app,
    env,
    {
      intent: 'receive',
      amount: input.amount,
      assetCode: asset.symbol,
      chainId: input.chainId,
      destination: { type: 'upa', accountId: account.id },
      expiresInSeconds: cfg.paymentTtlSeconds,
      description: input.description,
      metadata: input.fiatCurrency ? { fiatCurrency: input.fiatCurrency } : {},
    },
    { ...request, origin: 'public' },
  );
}

/** The payer's answer: the Payment's public view, the hosted checkout, and what to send where. No account id. */
export function publicPaymentResponse(row: PaymentRow, env: TEnvironmentConfig, publicBaseUrl: string): TCreatePublicPaymentResponse {
  const view = toPaymentView(row, NO_FINALITY); // the payer's view shows none of it
  const fiat = (row.metadata as Record<string, unknown>).fiatCurrency;
  return {
    payment: {
      id: view.id,
      apiVersion: view.apiVersion,
      intent: 'receive',
      status: view.status,
      statusVersion: view.statusVersion,
      paymentAmount: view.paymentAmount,
      network: { chainId: row.chainId, networkCode: findNetwork(env, row.chainId)?.code ?? String(row.chainId) },
      fiatCurrency: typeof fiat === 'string' ? fiat : null,
      recipientDisplay: view.recipientDisplay,
      description: view.description,
      expiresAt: row.expiresAt.toISOString(),
      createdAt: view.createdAt,
    },
    checkout: {
      paymentUrl: paymentUrlFor(publicBaseUrl, row.id),
      clientSecret: null,
      expiresAt: row.expiresAt.toISOString(),
      returnUrl: null,
    },
    nextAction: toNextAction(row),
  };
}
