import type pg from 'pg';
import { Prisma, type PrismaClient } from '../../db/client';
import { findAsset, findNetwork, type TAssetConfig, type TEnvironmentConfig, type TNetworkConfig } from '../../config/environments';
import type { AddressBook } from '../../custody';
import { ApiError, notFound } from '../requests/errors';
import { InputError } from '../requests/validation';
import { toAtomic } from '../amounts/amounts';
import type { AuthenticatedApp } from '../apps/apps';
import type { PaymentEngine } from '../engine/pure/engine';
import type { Payment, PaymentPayout } from '../../generated/prisma/client';
import { insertPayment, isDuplicatePayment, loadCreateContext, type CreateContext, type NewPayment } from './payment-insert';
import { custodyAddressRow } from '../chain/custody-addresses';
import { newId } from '../values/ids';
import { hmacHex } from '../../platform/secrets';
import { API_CRASH_POINTS, crashPoint } from '../../platform/crash-points';
import { timed } from '../../platform/step-timing';
import { splitFees, type FeeSplit } from '../amounts/pure/fees';
import { meetsMinimum } from '../amounts/pure/minimum-deposit';
import { assertModuleAvailable } from '../apps/modules';
import type { TCreatePayment } from './payment.schemas';
import { PAYMENT_VIEW_INCLUDE, type PaymentRow } from './payment-view';
import { paymentEventIds, paymentSubject, type PaymentOrigin } from './payment-origin';
import { newPayoutRow, providerSettlementSnapshot, quoteBankPayout, type BankQuote, type OfframpDeps } from './payment-payouts';
import { currentKey, type ServiceSecret } from '../keys/service-keys';

type NewPayout = Omit<PaymentPayout, 'createdAt' | 'updatedAt'>;

export interface CreatePaymentDeps {
  prisma: PrismaClient;
  pool: pg.Pool;
  engine: Pick<PaymentEngine, 'startPayment'>;
  custody: AddressBook;
  serviceSecret: ServiceSecret;
  /** The off-ramp provider (bank payouts); absent: a bank_account destination is refused. */
  offramp?: OfframpDeps;
}

/**
 * The Payment id is derived from (app, Idempotency-Key): a retry after a crash between the database
 * commit and the workflow start finds the same row and completes the start, instead of making a
 * second Payment.
 */
export function paymentIdFor(serviceSecret: ServiceSecret, appId: string, idempotencyKey: string): string {
  return `payment_${hmacHex(currentKey(serviceSecret), `payment-id:${appId}:${idempotencyKey}`).slice(0, 32)}`;
}

function refuse(
  code: 'payment_method_not_supported' | 'payment_amount_below_minimum' | 'chain_config_missing',
  message: string,
  details?: unknown,
): never {
  throw new ApiError(code, message, details);
}

/** A request's decimal amount in the asset's atomic units; more decimals than the asset has is 400. */
export function amountAtomicOf(amount: string, decimals: number): bigint {
  try {
    return toAtomic(amount, decimals);
  } catch {
    throw new InputError(`amount has more than ${decimals} decimal places`, [
      { field: 'body.amount', message: `at most ${decimals} decimal places` },
    ]);
  }
}

/** The configured network and asset a request names: an unknown chain, then an unknown asset, is refused. */
function assetOf(env: TEnvironmentConfig, input: TCreatePayment): { network: TNetworkConfig; asset: TAssetConfig } {
  const network = findNetwork(env, input.chainId);
  if (!network) refuse('chain_config_missing', `Chain ${input.chainId} is not configured for this environment`);
  const asset = findAsset(network, input.assetCode);
  if (!asset) refuse('payment_method_not_supported', `${input.assetCode} is not supported on chain ${input.chainId}`);
  return { network, asset };
}

/** The amount asked for in atomic units; nothing, or less than the asset's minimum deposit, is refused. */
function requestedAmount(amount: string, network: TNetworkConfig, asset: TAssetConfig): bigint {
  const amountAtomic = amountAtomicOf(amount, asset.decimals);
  const minimum = { amountAtomic: toAtomic(asset.minimumDeposit.amount, asset.decimals), inclusive: asset.minimumDeposit.inclusive };
  if (amountAtomic <= 0n || !meetsMinimum(amountAtomic, minimum)) {
    refuse(
      'payment_amount_below_minimum',
      `The minimum for ${asset.symbol} on chain ${network.chainId} is ${asset.minimumDeposit.amount}`,
      {
        minimumAmount: asset.minimumDeposit.amount,
        inclusive: asset.minimumDeposit.inclusive,
      },
    );
  }
  return amountAtomic;
}

/** A send's source account must be an account of this app. */
async function assertSourceAccount(prisma: PrismaClient, appId: string, sourceAccountId: string | null): Promise<void> {
  if (!sourceAccountId) return;
  const sender = await prisma.account.findFirst({ where: { id: sourceAccountId, appId }, select: { id: true } });
  if (!sender) throw notFound('Source account');
}

/** A bank_account destination's payout quote (null for a upa destination). */
async function bankQuoteFor(
  deps: CreatePaymentDeps,
  app: AuthenticatedApp,
  env: TEnvironmentConfig,
  input: TCreatePayment,
  target: { network: TNetworkConfig; asset: TAssetConfig; amountAtomic: bigint; netAtomic: bigint; paymentId: string },
): Promise<BankQuote | null> {
  if (input.destination.type !== 'bank_account') return null;
  // Paying a bank account is the bank_accounts module's too (the route checked payments).
  assertModuleAvailable('bank_accounts', env, { offrampProviderCode: deps.offramp?.provider.code ?? null });
  return quoteBankPayout(deps, app, {
    network: target.network,
    asset: target.asset,
    countries: env.bankAccounts?.countries ?? [],
    bankAccountId: input.destination.bankAccountId,
    amountAtomic: target.amountAtomic,
    netAtomic: target.netAtomic,
    metadata: input.metadata,
    quoteKey: `${target.paymentId}:quote`,
  });
}

/** Where the Payment settles: the provider for a bank payout, else the recipient's active profile, on this chain and asset. */
function settlementSnapshotOf(
  bank: BankQuote | null,
  profile: CreateContext['profile'],
  network: TNetworkConfig,
  asset: TAssetConfig,
): Prisma.JsonValue {
  if (bank) return providerSettlementSnapshot(bank);
  if (!profile || profile.status !== 'active') {
    refuse('payment_method_not_supported', 'The destination account has no settlement destination', {
      reasonCode: 'settlement_profile_missing',
    });
  }
  if (profile.chainId !== network.chainId || profile.assetSymbol !== asset.symbol) {
    refuse('payment_method_not_supported', `The destination settles ${profile.assetSymbol} on chain ${profile.chainId}`, {
      reasonCode: 'settlement_destination_mismatch',
    });
  }
  return profile.snapshot;
}

/** Funds can't be taken on a lapsed quote: a bank Payment expires with its quote at the latest. */
function expiryOf(expiresInSeconds: number, bank: BankQuote | null): Date {
  const requestedExpiry = Date.now() + expiresInSeconds * 1000;
  return new Date(bank ? Math.min(requestedExpiry, bank.quote.expiresAt.getTime()) : requestedExpiry);
}

/** Everything a new Payment's row is made of, decided before it is written. */
interface NewPaymentFacts {
  id: string;
  app: AuthenticatedApp;
  env: TEnvironmentConfig;
  input: TCreatePayment;
  requestHash: string;
  origin: PaymentOrigin;
  recipient: CreateContext['recipient'];
  senderAccountId: string | null;
  network: TNetworkConfig;
  asset: TAssetConfig;
  amountAtomic: bigint;
  fees: FeeSplit;
  escrowIndex: number;
  escrowAddress: string;
  settlement: Prisma.JsonValue;
  expiresAt: Date;
}

const decimal = (v: bigint) => new Prisma.Decimal(v.toString());

/** A new Payment's row: awaiting funds, at statusVersion 1. */
function newPaymentRow(f: NewPaymentFacts): NewPayment {
  const { input, fees } = f;
  return {
    id: f.id,
    appId: f.app.id,
    apiVersion: f.app.apiVersion,
    intent: input.intent,
    amountMode: 'collect_exact',
    status: 'requires_payment_method',
    offrampStatus: null,
    stage: 'awaiting_funds',
    operationalState: 'normal',
    operationalReasonCode: null,
    operationalUpdatedAt: null,
    statusVersion: 1,
    recipientAccountId: f.recipient.id,
    senderAccountId: f.senderAccountId,
    chainId: f.network.chainId,
    assetCode: f.asset.symbol,
    tokenAddress: f.asset.tokenAddress,
    decimals: f.asset.decimals,
    amountAtomic: decimal(f.amountAtomic),
    receivedAtomic: decimal(0n),
    pendingAtomic: decimal(0n),
    platformFeeBps: f.env.fees.platformFeeBps,
    partnerFeeBps: f.env.fees.partnerFeeBps,
    platformFeeAtomic: decimal(fees.platformAtomic),
    partnerFeeAtomic: decimal(fees.partnerAtomic),
    merchantNetAtomic: decimal(fees.netAtomic),
    escrowIndex: f.escrowIndex,
    escrowAddress: f.escrowAddress,
    recipientDisplayName: f.recipient.displayName,
    recipientLogoUrl: f.recipient.logoUrl,
    settlement: f.settlement,
    settlementTxHash: null,
    nextActionId: newId('nextAction'),
    requestHash: f.requestHash,
    externalReference: input.externalReference ?? null,
    description: input.description ?? null,
    metadata: input.metadata as Prisma.JsonValue,
    returnUrl: input.returnUrl ?? null,
    cancelReasonCode: null,
    cancelReason: null,
    failureCode: null,
    failureMessage: null,
    expiresAt: f.expiresAt,
    acceptedAt: null,
    succeededAt: null,
    cancelledAt: null,
    origin: f.origin,
  };
}

/**
 * Runs the insert; when an earlier attempt with this key committed the row, finishes what it started
 * instead, if it is the same request (another body under the same Idempotency-Key is a conflict).
 */
async function insertOrResume(
  prisma: PrismaClient,
  request: { paymentId: string; bodyHash: string },
  payoutRow: NewPayout | null,
  insert: () => Promise<Payment>,
): Promise<PaymentRow> {
  try {
    const created = await timed('insert', insert);
    return {
      ...created,
      incidents: [],
      fundReturns: [],
      payout: payoutRow ? { ...payoutRow, createdAt: created.createdAt, updatedAt: created.updatedAt } : null,
    };
  } catch (err) {
    if (!isDuplicatePayment(err)) throw err;
    const row = await prisma.payment.findUniqueOrThrow({ where: { id: request.paymentId }, include: PAYMENT_VIEW_INCLUDE });
    if (row.requestHash && row.requestHash !== request.bodyHash) {
      throw new ApiError('idempotency_conflict', 'This Idempotency-Key was used with a different request body');
    }
    return row;
  }
}

/** Validate, load (sender, bank quote, recipient), decide (settlement, expiry), write, then start the workflow. */
export async function createPayment(
  deps: CreatePaymentDeps,
  app: AuthenticatedApp,
  env: TEnvironmentConfig,
  input: TCreatePayment,
  request: { idempotencyKey: string; bodyHash: string; origin?: PaymentOrigin },
): Promise<PaymentRow> {
  const origin = request.origin ?? 'partner';
  const { network, asset } = assetOf(env, input);
  const amountAtomic = requestedAmount(input.amount, network, asset);
  const fees = splitFees(amountAtomic, env.fees);
  const sourceAccountId = input.intent === 'send' ? input.sourceAccountId : null;
  await assertSourceAccount(deps.prisma, app.id, sourceAccountId);
  // A bank payout is quoted first: a provider that is down or refuses leaves nothing created.
  const paymentId = paymentIdFor(deps.serviceSecret, app.id, request.idempotencyKey);
  const bank = await bankQuoteFor(deps, app, env, input, { network, asset, amountAtomic, netAtomic: fees.netAtomic, paymentId });
  const recipientId = input.destination.type === 'upa' ? input.destination.accountId : bank!.bankAccount.accountId;
  const context = await timed('context', () => loadCreateContext(deps.pool, app.id, recipientId));
  if (!context) throw notFound('Destination account');
  const { recipient, profile, escrowIndex } = context;
  const settlement = settlementSnapshotOf(bank, profile, network, asset);
  const expiresAt = expiryOf(input.expiresInSeconds, bank);
  const payoutRow = bank ? newPayoutRow(paymentId, bank, fees.netAtomic) : null;

  const custody = custodyAddressRow(deps.custody, { purpose: 'escrow', index: escrowIndex });
  const ids = { id: paymentId, recipientAccountId: recipient.id, origin };
  const subject = paymentSubject({ ...ids, appId: app.id, apiVersion: app.apiVersion });
  const facts: NewPaymentFacts = {
    id: paymentId,
    app,
    env,
    input,
    requestHash: request.bodyHash,
    origin,
    recipient,
    senderAccountId: sourceAccountId,
    network,
    asset,
    amountAtomic,
    fees,
    escrowIndex,
    escrowAddress: custody.address,
    settlement,
    expiresAt,
  };
  const row = await insertOrResume(deps.prisma, { paymentId, bodyHash: request.bodyHash }, payoutRow, () =>
    insertPayment(
      deps.pool,
      newPaymentRow(facts),
      custody,
      subject,
      [{ name: 'payment.created', payload: { ...paymentEventIds(ids), status: 'requires_payment_method', statusVersion: 1 } }],
      payoutRow,
    ),
  );
  crashPoint(API_CRASH_POINTS.paymentCommitted);

  await timed('workflow_start', () =>
    deps.engine.startPayment({ ...row, payoutQuoteExpiresAt: row.payout?.quoteExpiresAt ?? null }, network.confirmations),
  );
  return row;
}
