import type pg from 'pg';
import { Prisma, type PrismaClient } from '../../db/client';
import { findAsset, findNetwork, type TEnvironmentConfig } from '../../config/environments';
import type { AddressBook } from '../../custody';
import { ApiError, notFound } from '../requests/errors';
import { InputError } from '../requests/validation';
import { toAtomic } from '../amounts/amounts';
import type { AuthenticatedApp } from '../apps/apps';
import type { PaymentEngine } from '../engine/pure/engine';
import { insertPayment, isDuplicatePayment, loadCreateContext } from './payment-insert';
import { custodyAddressRow } from '../chain/custody-addresses';
import { newId } from '../values/ids';
import { hmacHex } from '../../platform/secrets';
import { API_CRASH_POINTS, crashPoint } from '../../platform/crash-points';
import { timed } from '../../platform/step-timing';
import { splitFees } from '../amounts/pure/fees';
import { meetsMinimum } from '../amounts/pure/minimum-deposit';
import { assertModuleAvailable } from '../apps/modules';
import type { TCreatePayment } from './payment.schemas';
import { PAYMENT_VIEW_INCLUDE, type PaymentRow } from './payment-view';
import { paymentEventIds, paymentSubject, type PaymentOrigin } from './payment-origin';
import { newPayoutRow, providerSettlementSnapshot, quoteBankPayout, type BankQuote, type OfframpDeps } from './payment-payouts';
import { currentKey, type ServiceSecret } from '../keys/service-keys';

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

export async function createPayment(
  deps: CreatePaymentDeps,
  app: AuthenticatedApp,
  env: TEnvironmentConfig,
  input: TCreatePayment,
  request: { idempotencyKey: string; bodyHash: string; origin?: PaymentOrigin },
): Promise<PaymentRow> {
  const origin = request.origin ?? 'partner';
  const { prisma } = deps;
  const network = findNetwork(env, input.chainId);
  if (!network) refuse('chain_config_missing', `Chain ${input.chainId} is not configured for this environment`);
  const asset = findAsset(network, input.assetCode);
  if (!asset) refuse('payment_method_not_supported', `${input.assetCode} is not supported on chain ${input.chainId}`);

  const amountAtomic = amountAtomicOf(input.amount, asset.decimals);
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

  const fees = splitFees(amountAtomic, env.fees);
  const sourceAccountId = input.intent === 'send' ? input.sourceAccountId : null;
  if (sourceAccountId) {
    const sender = await prisma.account.findFirst({ where: { id: sourceAccountId, appId: app.id }, select: { id: true } });
    if (!sender) throw notFound('Source account');
  }
  // A bank payout is quoted first: a provider that is down or refuses leaves nothing created.
  const paymentId = paymentIdFor(deps.serviceSecret, app.id, request.idempotencyKey);
  let bank: BankQuote | null = null;
  if (input.destination.type === 'bank_account') {
    // Paying a bank account is the bank_accounts module's too (the route checked payments).
    assertModuleAvailable('bank_accounts', env, { offrampProviderCode: deps.offramp?.provider.code ?? null });
    bank = await quoteBankPayout(deps, app, {
      network,
      asset,
      countries: env.bankAccounts?.countries ?? [],
      bankAccountId: input.destination.bankAccountId,
      amountAtomic,
      netAtomic: fees.netAtomic,
      metadata: input.metadata,
      quoteKey: `${paymentId}:quote`,
    });
  }
  const recipientId = input.destination.type === 'upa' ? input.destination.accountId : bank!.bankAccount.accountId;
  const context = await timed('context', () => loadCreateContext(deps.pool, app.id, recipientId));
  if (!context) throw notFound('Destination account');
  const { recipient, profile, escrowIndex } = context;
  let settlementSnapshot: Prisma.JsonValue;
  if (bank) {
    settlementSnapshot = providerSettlementSnapshot(bank);
  } else {
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
    settlementSnapshot = profile.snapshot;
  }

  const requestedExpiry = Date.now() + input.expiresInSeconds * 1000;
  // Funds can't be taken on a lapsed quote: a bank Payment expires with its quote at the latest.
  const expiresAt = new Date(bank ? Math.min(requestedExpiry, bank.quote.expiresAt.getTime()) : requestedExpiry);
  const payoutRow = bank ? newPayoutRow(paymentId, bank, fees.netAtomic) : null;

  const custody = custodyAddressRow(deps.custody, { purpose: 'escrow', index: escrowIndex });
  const ids = { id: paymentId, recipientAccountId: recipient.id, origin };
  const subject = paymentSubject({ ...ids, appId: app.id, apiVersion: app.apiVersion });
  const decimal = (v: bigint) => new Prisma.Decimal(v.toString());
  let row: PaymentRow;
  try {
    const created = await timed('insert', () =>
      insertPayment(
        deps.pool,
        {
          id: paymentId,
          appId: app.id,
          apiVersion: app.apiVersion,
          intent: input.intent,
          amountMode: 'collect_exact',
          status: 'requires_payment_method',
          offrampStatus: null,
          stage: 'awaiting_funds',
          operationalState: 'normal',
          operationalReasonCode: null,
          operationalUpdatedAt: null,
          statusVersion: 1,
          recipientAccountId: recipient.id,
          senderAccountId: sourceAccountId,
          chainId: network.chainId,
          assetCode: asset.symbol,
          tokenAddress: asset.tokenAddress,
          decimals: asset.decimals,
          amountAtomic: decimal(amountAtomic),
          receivedAtomic: decimal(0n),
          pendingAtomic: decimal(0n),
          platformFeeBps: env.fees.platformFeeBps,
          partnerFeeBps: env.fees.partnerFeeBps,
          platformFeeAtomic: decimal(fees.platformAtomic),
          partnerFeeAtomic: decimal(fees.partnerAtomic),
          merchantNetAtomic: decimal(fees.netAtomic),
          escrowIndex,
          escrowAddress: custody.address,
          recipientDisplayName: recipient.displayName,
          recipientLogoUrl: recipient.logoUrl,
          settlement: settlementSnapshot,
          settlementTxHash: null,
          nextActionId: newId('nextAction'),
          requestHash: request.bodyHash,
          externalReference: input.externalReference ?? null,
          description: input.description ?? null,
          metadata: input.metadata as Prisma.JsonValue,
          returnUrl: input.returnUrl ?? null,
          cancelReasonCode: null,
          cancelReason: null,
          failureCode: null,
          failureMessage: null,
          expiresAt,
          acceptedAt: null,
          succeededAt: null,
          cancelledAt: null,
          origin,
        },
        custody,
        subject,
        [{ name: 'payment.created', payload: { ...paymentEventIds(ids), status: 'requires_payment_method', statusVersion: 1 } }],
        payoutRow,
      ),
    );
    row = {
      ...created,
      incidents: [],
      fundReturns: [],
      payout: payoutRow ? { ...payoutRow, createdAt: created.createdAt, updatedAt: created.updatedAt } : null,
    };
  } catch (err) {
    if (!isDuplicatePayment(err)) throw err;
    // An earlier attempt with this key committed the row; finish what it started, if it is the same request.
    row = await prisma.payment.findUniqueOrThrow({ where: { id: paymentId }, include: PAYMENT_VIEW_INCLUDE });
    if (row.requestHash && row.requestHash !== request.bodyHash) {
      throw new ApiError('idempotency_conflict', 'This Idempotency-Key was used with a different request body');
    }
  }
  crashPoint(API_CRASH_POINTS.paymentCommitted);

  await timed('workflow_start', () =>
    deps.engine.startPayment({ ...row, payoutQuoteExpiresAt: row.payout?.quoteExpiresAt ?? null }, network.confirmations),
  );
  return row;
}
