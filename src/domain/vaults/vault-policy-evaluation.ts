import type { PrismaClient } from '../../db/client';
import { findAsset, type TAssetConfig, type TEnvironmentConfig } from '../../config/environments';
import type { AuthenticatedApp } from '../apps/apps';
import { availableVaultsSetup } from '../apps/modules';
import { formatAtomic } from '../amounts/amounts';
import { amountAtomicOf } from '../payments/create-payment';
import { ApiError, notFound } from '../requests/errors';
import { InputError } from '../requests/validation';
import { SPEND_PERIOD, SPEND_PERIOD_MS, vaultNetwork, type VaultsSetup } from './vault-config';
import { readSpendFacts, spendOfPayment, type SpendReading, type VaultFundingDeps, type VaultSpend } from './vault-funding';
import { decisionOf, fundingRules } from './pure/vault-policy-rules';
import type { TEvaluateVaultPolicy, TVaultPolicyEvaluation } from './vault.schemas';

type PaymentRow = NonNullable<Awaited<ReturnType<PrismaClient['payment']['findFirst']>>>;

/** The chain and asset the spend names: vaults must run on the chain (424), the asset be one of it (422). */
function assetOf(setup: VaultsSetup, input: TEvaluateVaultPolicy): TAssetConfig {
  const network = vaultNetwork(setup, input.chainId);
  if (!network) throw new ApiError('chain_config_missing', `Vaults are not configured on chain ${input.chainId} for this environment`);
  const asset = findAsset(network, input.assetCode);
  if (!asset) throw new ApiError('payment_method_not_supported', `${input.assetCode} is not supported on chain ${input.chainId}`);
  return asset;
}

/** A Payment named with the spend must be the spend: the fields that differ are a 400 naming each. */
function assertSpendIsPayment(p: PaymentRow, input: TEvaluateVaultPolicy, amountAtomic: bigint): void {
  const differ = [
    BigInt(p.amountAtomic.toFixed()) !== amountAtomic && {
      field: 'body.amount',
      message: `The Payment's amount is ${formatAtomic(p.amountAtomic.toFixed(), p.decimals)}`,
    },
    p.assetCode !== input.assetCode && { field: 'body.assetCode', message: `The Payment's asset is ${p.assetCode}` },
    p.chainId !== input.chainId && { field: 'body.chainId', message: `The Payment's chain is ${p.chainId}` },
    p.recipientAccountId !== input.destination.accountId && {
      field: 'body.destination.accountId',
      message: `The Payment's recipient is ${p.recipientAccountId}`,
    },
  ].filter((d): d is { field: string; message: string } => Boolean(d));
  if (differ.length > 0) throw new InputError('The spend does not match the Payment it names', differ);
}

/** The spend the request describes: the Payment's own when it names one (as authorize would weigh it). */
async function spendOf(deps: VaultFundingDeps, app: AuthenticatedApp, setup: VaultsSetup, input: TEvaluateVaultPolicy) {
  const asset = assetOf(setup, input);
  const amountAtomic = amountAtomicOf(input.amount, asset.decimals);
  const recipient = await deps.prisma.account.findFirst({
    where: { id: input.destination.accountId, appId: app.id },
    select: { id: true },
  });
  if (!recipient) throw notFound('Destination account');
  let spend: VaultSpend = {
    chainId: input.chainId,
    tokenAddress: asset.tokenAddress,
    amountAtomic,
    recipientAccountId: recipient.id,
    payment: null,
  };
  if (input.paymentId) {
    const payment = await deps.prisma.payment.findFirst({ where: { id: input.paymentId, appId: app.id } });
    if (!payment) throw notFound('Payment');
    assertSpendIsPayment(payment, input, amountAtomic);
    spend = spendOfPayment(payment);
  }
  return { asset, spend };
}

function spendLimitOf(reading: SpendReading, currency: string): TVaultPolicyEvaluation['spendLimit'] {
  const { policy, facts, periodStart } = reading;
  if (!policy || !facts.policyActive) return null;
  const remaining = facts.limitAtomic - facts.spentInPeriodAtomic;
  return {
    amountAtomic: facts.limitAtomic.toString(),
    currency,
    decimals: policy.spendLimitDecimals,
    period: SPEND_PERIOD,
    startsAt: periodStart.toISOString(),
    endsAt: new Date(periodStart.getTime() + SPEND_PERIOD_MS).toISOString(),
    authorizedAtomic: facts.spentInPeriodAtomic.toString(),
    remainingAtomic: (remaining > 0n ? remaining : 0n).toString(),
  };
}

/**
 * POST /v2/vaults/{vaultId}/policy/evaluate: what authorizing this spend from the vault would decide
 * now, with every rule's verdict. The facts are read as the real authorization reads them
 * (readSpendFacts) and weighed by the same rules (fundingRules); nothing is locked, reserved or
 * written, so the answer is advisory: the authorization decides again under the vault's lock.
 */
export async function evaluateVaultPolicy(
  deps: VaultFundingDeps,
  app: AuthenticatedApp,
  env: TEnvironmentConfig,
  vaultId: string,
  input: TEvaluateVaultPolicy,
  now = new Date(),
): Promise<{ evaluation: TVaultPolicyEvaluation }> {
  const setup = availableVaultsSetup(env);
  const vault = await deps.prisma.vault.findFirst({ where: { id: vaultId, appId: app.id } });
  if (!vault) throw notFound('Vault');
  const { asset, spend } = await spendOf(deps, app, setup, input);
  const reading = await readSpendFacts(deps.prisma, deps.chains, vault, spend, now);
  const rules = fundingRules(reading.facts);
  const decision = decisionOf(rules);
  return {
    evaluation: {
      vaultId: vault.id,
      accountId: vault.accountId,
      policyId: reading.policy?.id ?? null,
      spend: {
        amount: formatAtomic(spend.amountAtomic, asset.decimals),
        amountAtomic: spend.amountAtomic.toString(),
        assetCode: asset.symbol,
        decimals: asset.decimals,
        chainId: spend.chainId,
        tokenAddress: asset.tokenAddress,
        destination: { type: 'upa', accountId: input.destination.accountId },
        paymentId: spend.payment?.id ?? null,
      },
      decision: decision.ok ? 'allow' : 'deny',
      reasonCode: decision.ok ? null : decision.reason,
      rules,
      spendLimit: spendLimitOf(reading, setup.spendLimit.currency),
      // No policy rule asks an approval per spend: the policy's own email approval is behind it.
      approvalRequired: false,
      evaluatedAt: now.toISOString(),
    },
  };
}
