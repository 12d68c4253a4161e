import type { ClientPrincipal } from '../client-auth/access-tokens';
import { loadPayable } from '../payments/client-payments';
import type { TPaymentOption } from '../payments/payment-option.schemas';
import { authorizeVaultOption, vaultOptionProvider, type AuthorizeVaultOptionDeps } from '../vaults/vault-option';
import type { TCheckoutVault } from './checkout-view.schemas';

/**
 * The Vault option on the hosted checkout, driven server-side through the client API's own use cases
 * (vault-option.ts) for the payer of the page's session: the page never sees an action id. The
 * session's account must be the Payment's payer (the client API's binding), and its app hold v2:vaults.
 */
async function vaultOptionOf(
  deps: AuthorizeVaultOptionDeps,
  principal: ClientPrincipal,
  paymentId: string,
  now: Date,
): Promise<TPaymentOption | null> {
  const payment = await loadPayable(deps.prisma, principal, paymentId, 'claim');
  const [option] = await vaultOptionProvider(deps)({
    prisma: deps.prisma,
    serviceSecret: deps.serviceSecret,
    payment,
    accountId: principal.accountId,
    scopes: principal.app.scopes,
    now,
  });
  return option ?? null;
}

function toCheckoutVault(option: TPaymentOption | null, csrfToken: string): TCheckoutVault {
  if (!option || option.status === 'unavailable') return { state: 'none', displayName: null, csrfToken };
  const state = option.status === 'completed' ? 'completed' : option.execution ? 'available' : 'processing';
  return { state, displayName: option.displayName, csrfToken };
}

/** GET /checkout/{paymentId}/vault: whether this payer can pay from its vault now (or already did). */
export async function checkoutVault(
  deps: AuthorizeVaultOptionDeps,
  principal: ClientPrincipal,
  paymentId: string,
  csrfToken: string,
  now = new Date(),
): Promise<TCheckoutVault> {
  return toCheckoutVault(await vaultOptionOf(deps, principal, paymentId, now), csrfToken);
}

/**
 * POST /checkout/{paymentId}/vault/authorize: the payer pressed "Pay from Vault" on the page, which is
 * the managed authorization's approval. The action id is the one the option issues to this payer;
 * authorizeVaultFunding is idempotent per Payment and vault, and an option already under way is
 * answered as it stands, so a second press never pays twice.
 */
export async function payFromVault(
  deps: AuthorizeVaultOptionDeps,
  principal: ClientPrincipal,
  paymentId: string,
  csrfToken: string,
  now = new Date(),
): Promise<TCheckoutVault> {
  const option = await vaultOptionOf(deps, principal, paymentId, now);
  if (!option?.execution) return toCheckoutVault(option, csrfToken);
  const answer = await authorizeVaultOption(
    deps,
    principal,
    paymentId,
    option.id,
    {
      actionId: option.execution.actionId,
      proof: { type: 'managed_authorization', authorization: 'approved' },
      metadata: { channel: 'hosted_checkout' },
    },
    { now },
  );
  return toCheckoutVault(answer.option, csrfToken);
}
