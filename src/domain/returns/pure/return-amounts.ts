/**
 * How much a refund may take, pure: the create path (fund-return-rules.ts decideRefund, under the
 * Payment's row lock) and the signer's own check (return-destination-check.ts, read fresh before a
 * send) decide with this one rule.
 */

/** Every status but failed holds its amount against what can be returned. */
export const holdsAmount = (status: string): boolean => status !== 'failed';

/** Only a succeeded receive Payment is refunded: nothing of any other is refundable. */
export const isRefundable = (paymentIntent: string, paymentStatus: string): boolean =>
  paymentIntent === 'receive' && paymentStatus === 'succeeded';

export type RefundAmountRefusal = 'refund_amount_invalid' | 'refund_exceeds_payment' | 'refund_exceeds_payer';

export interface RefundAmountFacts {
  paymentAmountAtomic: bigint;
  /** The sum of the Payment's refunds that hold their amount (not failed). */
  heldAtomic: bigint;
  /** The amount asked for; null: the rest of the Payment (of the payer's share). */
  requestedAtomic: bigint | null;
  /** The destination payer's share of the Payment (what its funding transfers counted). */
  payerShareAtomic: bigint;
  /** The sum of the refunds to that payer that hold their amount. */
  payerHeldAtomic: bigint;
}

/**
 * A refund's amount: never beyond the Payment's rest nor beyond what its payer paid less what was
 * refunded to it (a Payment paid from several addresses refunds each its own share).
 */
export function decideRefundAmount(f: RefundAmountFacts): { ok: true; amountAtomic: bigint } | { ok: false; reason: RefundAmountRefusal } {
  const rest = f.paymentAmountAtomic - f.heldAtomic;
  const payerRest = f.payerShareAtomic - f.payerHeldAtomic;
  const amount = f.requestedAtomic ?? (payerRest < rest ? payerRest : rest);
  if (f.requestedAtomic !== null && f.requestedAtomic <= 0n) return { ok: false, reason: 'refund_amount_invalid' };
  if (amount <= 0n && rest > 0n) return { ok: false, reason: 'refund_exceeds_payer' };
  if (amount <= 0n || amount > rest) return { ok: false, reason: 'refund_exceeds_payment' };
  if (amount > payerRest) return { ok: false, reason: 'refund_exceeds_payer' };
  return { ok: true, amountAtomic: amount };
}
