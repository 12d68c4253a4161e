import {
  ProviderError,
  type OfframpProvider,
  type Payout,
  type ProviderBankAccount,
  type ProviderCallback,
} from '../../offramp/offramp-provider';

/**
 * The off-ramp provider's callbacks are hints: a verified callback only names a payout (by Payment
 * id) or a bank account, and what the service applies is the provider's answer to a read of it, as
 * Stripe and Bridge advise for webhooks. A callback whose body claims a state the provider does not
 * report changes nothing it did not say itself; a stale or reordered one can't move anything back.
 */

/** What the service does with the provider's answer (the bank accounts and payouts modules). */
export interface OfframpCallbackDeps {
  provider: OfframpProvider;
  onPayoutUpdated?(payout: Payout): Promise<void>;
  onBankAccountUpdated?(bankAccountId: string, account: ProviderBankAccount): Promise<void>;
}

/**
 * applied: the provider's answer went to the handler; not_at_provider: the provider has no such
 * payout or account (nothing to apply); uncertain: the provider can't tell the payout's state yet
 * (the Payment's own reads go on).
 */
export type CallbackOutcome = 'applied' | 'not_at_provider' | 'uncertain';

/**
 * Reads what a verified callback names from the provider and hands that answer on. Throws when the
 * provider can't be read (ProviderError 'unavailable') or a handler fails: the provider then sends
 * the callback again.
 */
export async function followProviderCallback(deps: OfframpCallbackDeps, callback: ProviderCallback): Promise<CallbackOutcome> {
  if (callback.type === 'bank_account.updated') {
    const account = await deps.provider.getBankAccount(callback.bankAccountId);
    if (!account) return 'not_at_provider';
    await deps.onBankAccountUpdated?.(callback.bankAccountId, account);
    return 'applied';
  }
  let payout: Payout | null;
  try {
    payout = await deps.provider.getPayout(callback.paymentId);
  } catch (err) {
    if (err instanceof ProviderError && err.kind === 'uncertain') return 'uncertain';
    throw err;
  }
  if (!payout) return 'not_at_provider';
  await deps.onPayoutUpdated?.(payout);
  return 'applied';
}
