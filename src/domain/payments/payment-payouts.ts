import { Prisma, type PrismaClient } from '../../db/client';
import type { TAssetConfig, TBankCountryConfig, TNetworkConfig } from '../../config/environments';
import type { PaymentPayout } from '../../generated/prisma/client';
import { ProviderError, type OfframpProvider, type Payout, type Quote } from '../../offramp/offramp-provider';
import type { AuthenticatedApp } from '../apps/apps';
import type { PaymentEngine } from '../engine/pure/engine';
import { ApiError, notFound, UpstreamFailure } from '../requests/errors';
import type { PayoutUpdate } from './pure/payout-machine';
import { quoteExpired } from './quote-expiry';

/**
 * A send Payment to a linked bank account: quoted by the off-ramp provider at creation,
 * funded into escrow like every send Payment, settled to the quote's deposit address, then paid out by
 * the provider (workflows/payment.ts drives it; payout-machine.ts decides). See docs/decisions/bank-accounts-and-payouts.md
 * "Bank payouts".
 */

/** The off-ramp the service uses: its provider and, for the callback route, what a payout update does. */
export interface OfframpDeps {
  provider: OfframpProvider;
}

/** Metadata key a sandbox app sets to pick the sandbox provider's scenario (ignored in production). */
export const SANDBOX_SCENARIO_KEY = 'sandboxPayoutScenario';

export interface BankQuote {
  bankAccount: { id: string; accountId: string; providerCode: string; providerAccountId: string };
  quote: Quote;
  sandboxScenario: string | null;
}

function refuse(message: string, reasonCode: string): never {
  throw new ApiError('payment_method_not_supported', message, { reasonCode });
}

/** The provider as the cause (the endpoint names the code); nothing is created. */
export function providerFailure(err: unknown): UpstreamFailure {
  if (err instanceof ProviderError && err.kind === 'unavailable') {
    return new UpstreamFailure('unavailable', 'The payout provider is unavailable; retry with the same Idempotency-Key');
  }
  if (err instanceof ProviderError) return new UpstreamFailure('error', 'The payout provider refused the quote');
  throw err;
}

/**
 * The bank account (verified, of an account of this app, registered with the provider) and the
 * provider's quote for what it will receive: the Payment's net, after the service's fees.
 */
export async function quoteBankPayout(
  deps: { prisma: PrismaClient; offramp?: OfframpDeps },
  app: AuthenticatedApp,
  target: {
    network: TNetworkConfig;
    asset: TAssetConfig;
    /** The environment's bank payout countries (config/environments.json `bankAccounts`). */
    countries: TBankCountryConfig[];
    bankAccountId: string;
    amountAtomic: bigint;
    netAtomic: bigint;
    metadata: Record<string, unknown>;
    quoteKey: string;
  },
): Promise<BankQuote> {
  const row = await deps.prisma.bankAccount.findFirst({ where: { id: target.bankAccountId, appId: app.id } });
  if (!row) throw notFound('Bank account');
  const provider = deps.offramp?.provider;
  if (!provider || row.providerCode !== provider.code)
    refuse('Bank payouts are not available for this bank account', 'offramp_unavailable');
  if (row.status !== 'verified' || !row.providerAccountId)
    refuse(`The bank account is ${row.status}, not verified`, 'bank_account_not_verified');
  // The bounds the config advertises for the country (externalBank.countries[]) are the ones enforced.
  const country = target.countries.find((c) => c.country === row.country);
  if (!country?.enabled) refuse(`Bank payouts to ${row.country} are not enabled for this environment`, 'bank_country_not_enabled');
  if (target.amountAtomic < BigInt(country.minimumAmountAtomic)) {
    throw new ApiError(
      'payment_amount_below_minimum',
      `The minimum bank payout to ${row.country} is ${country.minimumAmountAtomic} atomic units`,
      {
        minimumAmountAtomic: country.minimumAmountAtomic,
      },
    );
  }
  if (target.amountAtomic > BigInt(country.maximumAmountAtomic)) {
    refuse(`The maximum bank payout to ${row.country} is ${country.maximumAmountAtomic} atomic units`, 'amount_above_maximum');
  }
  if (target.netAtomic <= 0n) refuse('Nothing is left for the payout after fees', 'amount_below_fees');
  let quote: Quote;
  try {
    quote = await provider.quote({
      country: row.country,
      currency: row.currency,
      rail: row.rail,
      asset: {
        symbol: target.asset.symbol,
        decimals: target.asset.decimals,
        chainId: target.network.chainId,
        tokenAddress: target.asset.tokenAddress,
      },
      sourceAmountAtomic: target.netAtomic,
      // A retried create (same Payment id) gets the same quote back.
      idempotencyKey: target.quoteKey,
    });
  } catch (err) {
    throw providerFailure(err);
  }
  // The settlement pays the provider exactly the net: a quote for anything else can't be honoured.
  if (quote.providerPrincipalAtomic + quote.providerFeeAtomic !== target.netAtomic || quote.providerPrincipalAtomic <= 0n) {
    throw new UpstreamFailure('error', 'The payout provider quoted another amount');
  }
  // A quote that lapsed before the Payment exists could fund nothing: refused, not re-quoted (retry rule 4).
  if (quote.expiresAt.getTime() <= Date.now()) throw quoteExpired(quote.expiresAt, "The payout provider's quote");
  const scenario = app.environment === 'sandbox' ? target.metadata[SANDBOX_SCENARIO_KEY] : undefined;
  return {
    bankAccount: { id: row.id, accountId: row.accountId, providerCode: row.providerCode, providerAccountId: row.providerAccountId! },
    quote,
    sandboxScenario: typeof scenario === 'string' ? scenario : null,
  };
}

/** The payment_payouts row a bank Payment is created with (inserted with the Payment). */
export function newPayoutRow(paymentId: string, q: BankQuote, netAtomic: bigint): Omit<PaymentPayout, 'createdAt' | 'updatedAt'> {
  const dec = (v: bigint) => new Prisma.Decimal(v.toString());
  return {
    paymentId,
    bankAccountId: q.bankAccount.id,
    providerCode: q.bankAccount.providerCode,
    providerAccountId: q.bankAccount.providerAccountId,
    quoteId: q.quote.quoteId,
    sourceAtomic: dec(netAtomic),
    providerPrincipalAtomic: dec(q.quote.providerPrincipalAtomic),
    providerFeeAtomic: dec(q.quote.providerFeeAtomic),
    rate: q.quote.rate,
    destinationAmount: q.quote.destinationAmount,
    destinationCurrency: q.quote.currency,
    depositAddress: q.quote.depositAddress.toLowerCase(),
    quoteExpiresAt: q.quote.expiresAt,
    sandboxScenario: q.sandboxScenario,
    payoutId: null,
    payoutStatus: null,
    reasonCode: null,
    refundTxHash: null,
  };
}

/** The settlement snapshot of a bank Payment: the settlement sender pays the quote's deposit address. */
export function providerSettlementSnapshot(q: BankQuote): Prisma.JsonValue {
  return {
    destinationType: 'offramp_provider',
    settlementDestinationId: null,
    destinationAddress: q.quote.depositAddress.toLowerCase(),
    providerCode: q.bankAccount.providerCode,
  };
}

/** A provider payout as the workflow takes it. */
export function toPayoutUpdate(p: Payout): PayoutUpdate {
  return { status: p.status, reasonCode: p.reasonCode, refundTxHash: p.refundTxHash ? p.refundTxHash.toLowerCase() : null };
}

/**
 * The provider's answer about a payout (read when a verified callback named it, never the callback's
 * body): handed to the Payment's workflow (payoutUpdated), which is started again from the stored
 * Payment when it has finished (a payout returned after success). A payout of no Payment of ours is
 * ignored.
 */
export async function onPayoutUpdated(
  deps: { prisma: PrismaClient; engine: Pick<PaymentEngine, 'payoutUpdated'>; confirmationsOf(chainId: number): number },
  payout: Payout,
): Promise<boolean> {
  const payment = await deps.prisma.payment.findUnique({
    where: { id: payout.paymentId },
    include: { payout: { select: { paymentId: true } } },
  });
  if (!payment?.payout) return false;
  await deps.engine.payoutUpdated(payment, deps.confirmationsOf(payment.chainId), toPayoutUpdate(payout));
  return true;
}

type PayoutDeps = { prisma: PrismaClient; offramp?: OfframpProvider };

function providerOf(deps: PayoutDeps): OfframpProvider {
  if (!deps.offramp) throw new ProviderError('unavailable', 'no off-ramp provider is configured');
  return deps.offramp;
}

/**
 * Asks the provider to pay the bank account, once the settlement delivered the money to its deposit
 * address. The Payment id is the idempotency key: a retry after a timeout finds the same payout.
 */
export async function requestPayout(deps: PayoutDeps, paymentId: string): Promise<PayoutUpdate> {
  const payment = await deps.prisma.payment.findUniqueOrThrow({ where: { id: paymentId }, include: { payout: true } });
  const row = payment.payout;
  if (!row || !payment.settlementTxHash || !payment.escrowAddress) throw new Error(`payment ${paymentId} has no funded payout`);
  const payout = await providerOf(deps).createPayout({
    paymentId,
    quoteId: row.quoteId,
    providerAccountId: row.providerAccountId,
    amountAtomic: BigInt(row.sourceAtomic.toFixed()),
    fundingTxHash: payment.settlementTxHash,
    // A failed or returned payout comes back to escrow, where the workflow sees it as a refund.
    refundAddress: payment.escrowAddress,
    ...(row.sandboxScenario ? { sandboxScenario: row.sandboxScenario } : {}),
  });
  await deps.prisma.paymentPayout.updateMany({ where: { paymentId, payoutId: null }, data: { payoutId: payout.payoutId } });
  return toPayoutUpdate(payout);
}

/** The provider's payout for this Payment, or null when it has none. */
export async function readPayout(deps: PayoutDeps, paymentId: string): Promise<PayoutUpdate | null> {
  const payout = await providerOf(deps).getPayout(paymentId);
  if (!payout) return null;
  await deps.prisma.paymentPayout.updateMany({ where: { paymentId, payoutId: null }, data: { payoutId: payout.payoutId } });
  return toPayoutUpdate(payout);
}
