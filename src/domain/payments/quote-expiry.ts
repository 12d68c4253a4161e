import { ApiError } from '../requests/errors';
import { isOpenStatus } from './pure/payment-machine';

/**
 * Quote expiry (409 payment_quote_expired; the spec's retry rule 4). Two kinds of quote exist: a bank
 * payout's (the off-ramp provider's, `payment_payouts.quote_expires_at`) and a checkout option's. The
 * options offered today move one asset to itself, so an option's quote is the Payment's own terms and
 * lapses with the Payment (quoteExpiresAt = expiresAt). Neither kind is refreshed on the same Payment.
 */

/** The refusal of a lapsed quote; details say when it lapsed and that it can't be refreshed here. */
export function quoteExpired(quoteExpiresAt: Date, what: string): ApiError {
  const at = quoteExpiresAt.toISOString();
  return new ApiError('payment_quote_expired', `${what} lapsed at ${at} and can't be refreshed on this Payment`, {
    quoteExpiresAt: at,
    refreshable: false,
  });
}

interface OptionSource {
  status: string;
  expiresAt: Date;
}

/**
 * A checkout option's quote has lapsed: its Payment expired (that is the quote lapsing), or is still
 * open at or after its expiry (its workflow has not expired it yet). A Payment that closed otherwise
 * (accepted, succeeded, cancelled, failed) is not open, whatever the clock says.
 */
export function optionQuoteLapsed(p: OptionSource, now: Date): boolean {
  return p.status === 'expired' || (isOpenStatus(p.status) && now.getTime() >= p.expiresAt.getTime());
}

/**
 * What confirm and authorize check before using an option: 409 payment_quote_expired once its quote
 * lapsed, 409 payment_not_open once the Payment closed otherwise. Each answer is final for the Payment,
 * so the identical request keeps getting it.
 */
export function assertOptionUsable(p: OptionSource, now: Date, use: 'confirmation' | 'authorization'): void {
  if (optionQuoteLapsed(p, now)) throw quoteExpired(p.expiresAt, "The option's quote");
  if (!isOpenStatus(p.status)) throw new ApiError('payment_not_open', `A ${p.status} Payment accepts no ${use}`, { status: p.status });
}
