import type { PrismaClient } from '../../db/client';
import type { Scope } from '../apps/apps';
import { formatAtomic } from '../amounts/amounts';
import { hmacHex, safeEqual } from '../../platform/secrets';
import { issueAction } from './payment-actions';
import { ZPaymentOption, type TPaymentOption } from './payment-option.schemas';
import { remainingOf, toNextAction, type PaymentRow } from './payment-view';
import { optionQuoteLapsed } from './quote-expiry';
import { SWEPT_TRANSFER_STATUSES } from './payment-store';
import { anyKey, currentKey, type ServiceSecret } from '../keys/service-keys';

/** What an option provider sees: the Payment, the payer account (from the client token) and the clock. */
export interface PaymentOptionContext {
  prisma: PrismaClient;
  serviceSecret: ServiceSecret;
  payment: PaymentRow;
  /** The payer: the account the client token is bound to. */
  accountId: string;
  /** The scopes of the token's app: an option needing one it lacks (the Vault option: v2:vaults) is not offered. */
  scopes: readonly Scope[];
  now: Date;
}

/**
 * One kind of checkout option (a rail). The direct wallet transfer is built in; others (the Vault
 * option) are passed as extraOptions by the module that owns them, and issue their action ids with
 * issueAction like the direct one.
 */
export type PaymentOptionProvider = (ctx: PaymentOptionContext) => Promise<TPaymentOption[]>;

/** The payment method of the direct option: the payer's own wallet sends to the deposit address. */
export const WALLET_TRANSFER_METHOD = 'wallet_transfer';

/**
 * Stable per (Payment, method), so a later call (authorize, confirm) can name the option it was shown,
 * and unguessable across Payments (an HMAC under the service secret).
 */
export function paymentOptionId(serviceSecret: ServiceSecret, paymentId: string, method: string): string {
  return optionIdUnder(currentKey(serviceSecret), paymentId, method);
}

const optionIdUnder = (key: string, paymentId: string, method: string) =>
  `pay_option_${hmacHex(key, `payment-option:${paymentId}:${method}`).slice(0, 32)}`;

/** Whether `candidate` is the Payment's option of `method` under any accepted key (an option shown before a key rotation still counts). */
export function isPaymentOptionId(serviceSecret: ServiceSecret, paymentId: string, method: string, candidate: string): boolean {
  return anyKey(serviceSecret, (key) => safeEqual(optionIdUnder(key, paymentId, method), candidate));
}

const big = (d: { toString(): string }) => BigInt(d.toString());
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'expired']);

function optionStatus(p: PaymentRow, paid: bigint, now: Date): TPaymentOption['status'] {
  if (p.status === 'succeeded' || p.status === 'accepted') return 'completed';
  if (TERMINAL.has(p.status) || optionQuoteLapsed(p, now)) return 'unavailable';
  return paid > 0n ? 'processing' : 'available';
}

/** The direct option, derived from the Payment's deposit instructions; none without an escrow address. */
export async function walletTransferOption(ctx: PaymentOptionContext): Promise<TPaymentOption[]> {
  const p = ctx.payment;
  if (!p.escrowAddress) return [];
  const id = paymentOptionId(ctx.serviceSecret, p.id, WALLET_TRANSFER_METHOD);
  const required = big(p.amountAtomic);
  const seen = big(p.receivedAtomic) + big(p.pendingAtomic);
  const nextAction = toNextAction(p);
  // Only a transfer still owed, on a quote still good, is something to execute; an action id is issued for it alone.
  const action =
    nextAction?.type === 'transaction' && !optionQuoteLapsed(p, ctx.now)
      ? await issueAction(
          ctx.prisma,
          { paymentId: p.id, optionId: id, accountId: ctx.accountId, proofType: 'transaction', expiresAt: p.expiresAt },
          ctx.now,
        )
      : null;
  const transfers = await ctx.prisma.paymentTransfer.findMany({
    where: { paymentId: p.id, status: { notIn: SWEPT_TRANSFER_STATUSES } },
    orderBy: [{ blockNumber: 'asc' }, { logIndex: 'asc' }],
  });
  return [
    ZPaymentOption.parse({
      id,
      providerCode: 'direct',
      paymentMethodType: WALLET_TRANSFER_METHOD,
      paymentMethodId: `evm:${p.chainId}:${p.tokenAddress.toLowerCase()}`,
      type: 'crypto_transfer',
      displayName: `Send ${p.assetCode} from a wallet`,
      status: optionStatus(p, seen, ctx.now),
      selectionStatus: seen > 0n ? 'selected' : 'not_selected',
      requiredAmountAtomic: required.toString(),
      paidAmountAtomic: seen.toString(),
      remainingAmountAtomic: remainingOf(p).toString(),
      isTerminal: TERMINAL.has(p.status),
      confirmationMode: 'chain_detection',
      transactionSubmissions: transfers.map((t) => ({
        transactionHash: t.txHash,
        chainId: t.chainId,
        amountAtomic: t.amountAtomic.toString(),
        status: t.status,
        submittedAt: t.createdAt.toISOString(),
      })),
      ...optionTerms(p, action),
      receipts: transfers
        .filter((t) => t.status === 'confirmed' && (t.role ?? 'funding') === 'funding')
        .map((t) => ({
          type: 'transaction' as const,
          transactionHash: t.txHash,
          chainId: t.chainId,
          amountAtomic: t.amountAtomic.toString(),
          confirmedAt: t.updatedAt.toISOString(),
        })),
    }),
  ];
}

type IssuedAction = Awaited<ReturnType<typeof issueAction>>;

/**
 * What every option of a Payment shares: the amounts (the payer sends the Payment's amount in its
 * asset, the recipient nets it after fees, no provider fee), the action to execute and the expiries.
 * Same asset in and out: the quote is the Payment's own terms, lapses with it, and is not refreshable
 * (quote-expiry.ts).
 */
export function optionTerms(p: PaymentRow, action: IssuedAction | null) {
  const required = big(p.amountAtomic);
  const net = big(p.merchantNetAtomic);
  const asset = { assetSymbol: p.assetCode, decimals: p.decimals, chainId: p.chainId };
  const settled = (atomic: bigint) => ({
    amountAtomic: atomic.toString(),
    amountDecimal: formatAtomic(atomic, p.decimals),
    ...asset,
    tokenAddress: p.tokenAddress,
  });
  const expiresAt = p.expiresAt.toISOString();
  return {
    sourceAmount: { amountAtomic: required.toString(), ...asset },
    destinationAmount: { amountAtomic: net.toString(), ...asset },
    payerAmount: settled(required),
    recipientAmount: settled(net),
    providerFee: settled(0n),
    execution: action ? { actionId: action.id, type: action.proofType, expiresAt: action.expiresAt.toISOString() } : null,
    expiresAt,
    refreshable: false,
    feeAmountAtomic: '0',
    actionExpiresAt: action ? action.expiresAt.toISOString() : null,
    quoteExpiresAt: expiresAt,
    orderExpiresAt: expiresAt,
  };
}

/** Every option of a Payment for one payer: the direct one first, then each extra provider's. */
export async function paymentOptions(
  ctx: PaymentOptionContext,
  extraOptions: readonly PaymentOptionProvider[] = [],
): Promise<TPaymentOption[]> {
  const all = [walletTransferOption, ...extraOptions];
  const lists = [];
  for (const provide of all) lists.push(...(await provide(ctx)));
  return lists;
}
