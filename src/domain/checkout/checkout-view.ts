import type { Payment } from '../../generated/prisma/client';
import { formatAtomic } from '../amounts/amounts';
import type { PaymentStatus } from '../payments/pure/payment-machine';
import { NO_FINALITY, type TFinality, type TTransactionFinality } from '../chain/finality.schemas';
import { onChain } from '../chain/pure/finality';
import type { TCheckoutPage, TCheckoutPhase, TCheckoutStatus } from './checkout-view.schemas';

/** What the phase depends on: the Payment's status, its amounts, its expiry and the clock. */
export interface CheckoutPaymentState {
  status: PaymentStatus;
  amountAtomic: bigint;
  /** Confirmed funds counted for the Payment. */
  receivedAtomic: bigint;
  /** Funding seen on chain, still confirming. */
  pendingAtomic: bigint;
  expiresAt: Date;
}

/** The phases in which the deposit address is offered as something to pay. */
export const PAYABLE_PHASES: ReadonlySet<TCheckoutPhase> = new Set(['awaiting_payment', 'seen', 'underpaid']);

/**
 * The payer's phase for a Payment state: one function, so the page and its live status never
 * disagree. Open Payments: nothing seen (awaiting_payment); funds confirming that cover the amount
 * (confirming: nothing more to send); funds confirming that don't (seen: send the rest); confirmed
 * funds short of the amount with nothing confirming (underpaid: send the rest). An open Payment past
 * expiresAt with nothing confirming is shown expired at once, as its workflow's timer will make it
 * (payment-machine onExpired), so the page never offers an address after the deadline.
 */
export function checkoutPhaseOf(s: CheckoutPaymentState, now: Date): TCheckoutPhase {
  switch (s.status) {
    case 'succeeded':
    case 'accepted':
    case 'expired':
    case 'cancelled':
    case 'failed':
      return s.status;
    case 'requires_payment_method':
    case 'processing': {
      const owed = s.amountAtomic - s.receivedAtomic - s.pendingAtomic;
      const past = now.getTime() >= s.expiresAt.getTime();
      // Past the deadline nothing more is asked: funds already confirming still count.
      if (s.pendingAtomic > 0n) return owed > 0n && !past ? 'seen' : 'confirming';
      if (past) return 'expired';
      if (owed <= 0n) return 'confirming'; // counted in full: accepted in the same step
      return s.receivedAtomic > 0n ? 'underpaid' : 'awaiting_payment';
    }
    default: {
      const unknown: never = s.status;
      throw new Error(`no checkout phase for Payment status ${String(unknown)}`);
    }
  }
}

/**
 * EIP-681 URI of an ERC-20 transfer: `ethereum:<token>@<chainId>/transfer?address=<to>&uint256=<atomic>`.
 * Wallets that scan it pre-fill the token, network, recipient and exact amount in atomic units.
 */
export function eip681TransferUri(t: { tokenAddress: string; chainId: number; to: string; amountAtomic: bigint }): string {
  if (t.amountAtomic < 0n) throw new Error('an EIP-681 amount is never negative');
  return `ethereum:${t.tokenAddress}@${t.chainId}/transfer?address=${t.to}&uint256=${t.amountAtomic.toString()}`;
}

const big = (d: { toString(): string }) => BigInt(d.toString());

export function checkoutStateOf(p: Payment): CheckoutPaymentState {
  return {
    status: p.status as PaymentStatus,
    amountAtomic: big(p.amountAtomic),
    receivedAtomic: big(p.receivedAtomic),
    pendingAtomic: big(p.pendingAtomic),
    expiresAt: p.expiresAt,
  };
}

/**
 * The payer's transfers on chain as one bar: the least deep of them (the one everything waits on),
 * with the latest estimate; null while none is on chain (before any is seen, or after a reorg took
 * them away). One taken away counts for nothing: it would hold the bar at 0, never final.
 */
export function payerConfirmations(all: TTransactionFinality[]): TCheckoutStatus['confirmations'] {
  const transfers = all.filter(onChain);
  if (transfers.length === 0) return null;
  const least = transfers.reduce((a, b) => (b.confirmations < a.confirmations ? b : a));
  const estimates = transfers.map((t) => t.estimatedFinalAt).filter((t): t is string => t !== null);
  return {
    confirmations: least.confirmations,
    confirmationsRequired: least.confirmationsRequired,
    finalized: transfers.every((t) => t.finalized),
    estimatedFinalAt: estimates.length === 0 ? null : estimates.reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a)),
  };
}

/** The live part of the page. Nothing here is secret: the Payment id is the capability to read it. */
export function toCheckoutStatus(p: Payment, now: Date, finality: TFinality = NO_FINALITY): TCheckoutStatus {
  const s = checkoutStateOf(p);
  const phase = checkoutPhaseOf(s, now);
  const seen = s.receivedAtomic + s.pendingAtomic;
  const owed = s.amountAtomic - seen;
  const payable =
    PAYABLE_PHASES.has(phase) && p.escrowAddress && owed > 0n
      ? {
          address: p.escrowAddress,
          amount: formatAtomic(owed, p.decimals),
          amountAtomic: owed.toString(),
          uri: eip681TransferUri({ tokenAddress: p.tokenAddress, chainId: p.chainId, to: p.escrowAddress, amountAtomic: owed }),
        }
      : null;
  return {
    paymentId: p.id,
    phase,
    statusVersion: p.statusVersion,
    amount: formatAtomic(s.amountAtomic, p.decimals),
    amountAtomic: s.amountAtomic.toString(),
    assetCode: p.assetCode,
    receivedAmount: formatAtomic(seen, p.decimals),
    payable,
    expiresAt: p.expiresAt.toISOString(),
    returnUrl: p.returnUrl,
    confirmations: payerConfirmations(finality.transfers),
  };
}

/** The page's view: the status, the recipient as captured at creation, and the network by name. */
export function toCheckoutPage(p: Payment, network: { name: string }, now: Date, finality: TFinality = NO_FINALITY): TCheckoutPage {
  return {
    status: toCheckoutStatus(p, now, finality),
    recipient: { displayName: p.recipientDisplayName, logoUrl: p.recipientLogoUrl },
    description: p.description,
    network: { name: network.name, chainId: p.chainId },
    tokenAddress: p.tokenAddress,
    decimals: p.decimals,
  };
}
