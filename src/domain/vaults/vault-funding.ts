import type { Address } from 'viem';
import { Prisma, type PrismaClient } from '../../db/client';
import type { ChainRegistry } from '../../chain/registry';
import { ApiError, notFound } from '../requests/errors';
import { newId } from '../values/ids';
import { writeVaultAudit, type VaultActor } from './vault-audit';
import { periodStartOf, reserveKey, SPEND_PERIOD_MS } from './vault-config';
import type { TFundingOperation } from './vault.schemas';
import { lockVault, reservedByToken, spentInPeriod } from './vaults';
import { policyTokens } from './vault-view';
import { decideFunding, type FundingFacts, type FundingRefusal } from './pure/vault-policy-rules';

type Db = PrismaClient | Prisma.TransactionClient;
type FundingRow = Awaited<ReturnType<PrismaClient['vaultFundingOperation']['findFirstOrThrow']>>;

export interface VaultFundingDeps {
  prisma: PrismaClient;
  chains: Pick<ChainRegistry, 'get'>;
}

/** What a Vault payment option offers: the exact transfer this vault would make for the Payment. */
export interface VaultOption {
  paymentMethodType: 'vault';
  vaultId: string;
  policyId: string;
  accountId: string;
  vaultAddress: string;
  chainId: number;
  tokenAddress: string;
  assetSymbol: string;
  decimals: number;
  amountAtomic: string;
  availableAtomic: string;
  remainingInPeriodAtomic: string;
  periodEndsAt: string;
}

interface Evaluation {
  facts: FundingFacts;
  vault: {
    id: string;
    appId: string;
    accountId: string;
    address: string | null;
    periodAnchorAt: Date | null;
    activePolicyId: string | null;
  };
  payment: {
    id: string;
    chainId: number;
    tokenAddress: string;
    assetCode: string;
    decimals: number;
    escrowAddress: string | null;
    expiresAt: Date;
  };
  policyId: string | null;
  periodStart: Date;
}

type PaymentRow = NonNullable<Awaited<ReturnType<PrismaClient['payment']['findUnique']>>>;
type PolicyRow = NonNullable<Awaited<ReturnType<PrismaClient['vaultPolicy']['findUnique']>>>;
type SpendingVault = Evaluation['vault'];

/** Money that would leave the vault: the Payment it pays, or in a dry run without one, what is named. */
export interface VaultSpend {
  chainId: number;
  tokenAddress: string;
  amountAtomic: bigint;
  recipientAccountId: string | null;
  payment: PaymentRow | null;
}

export const spendOfPayment = (p: PaymentRow): VaultSpend => ({
  chainId: p.chainId,
  tokenAddress: p.tokenAddress,
  amountAtomic: BigInt(p.amountAtomic.toFixed()),
  recipientAccountId: p.recipientAccountId,
  payment: p,
});

/** An open receive Payment with an escrow, before its expiry: what a vault may fund. */
function paymentOpen(p: PaymentRow, now: Date): boolean {
  return p.intent === 'receive' && p.status === 'requires_payment_method' && p.expiresAt > now && Boolean(p.escrowAddress);
}

export interface SpendReading {
  facts: FundingFacts;
  policy: PolicyRow | null;
  periodStart: Date;
}

/**
 * Reads every fact the funding rules weigh for one spend (only reads: the real authorization calls it
 * under the vault's lock, the dry run and the option without one).
 */
export async function readSpendFacts(
  db: Db,
  chains: VaultFundingDeps['chains'],
  vault: SpendingVault,
  spend: VaultSpend,
  now: Date,
): Promise<SpendReading> {
  const policy = vault.activePolicyId ? await db.vaultPolicy.findUnique({ where: { id: vault.activePolicyId } }) : null;
  const policyActive = policy?.status === 'active' && vault.periodAnchorAt !== null;
  const token = spend.tokenAddress.toLowerCase();
  const tokenAllowed = policy
    ? policyTokens(policy).some((t) => t.chainId === spend.chainId && t.tokenAddress.toLowerCase() === token)
    : false;
  const periodStart = periodStartOf(vault.periodAnchorAt ?? now, now);
  const spent = await spentInPeriod(db, vault.id, periodStart);
  const reserved = (await reservedByToken(db, vault.id)).get(reserveKey(spend.chainId, spend.tokenAddress)) ?? 0n;
  const balance =
    policyActive && tokenAllowed && vault.address
      ? await chains.get(spend.chainId).getTokenBalance({ token: spend.tokenAddress as Address, owner: vault.address as Address })
      : 0n;
  return {
    facts: {
      paymentOpen: spend.payment ? paymentOpen(spend.payment, now) : null,
      destinationAllowed: spend.recipientAccountId !== vault.accountId,
      policyActive,
      tokenAllowed,
      limitAtomic: policy ? BigInt(policy.spendLimitAtomic.toFixed()) : 0n,
      spentInPeriodAtomic: spent,
      availableAtomic: balance > reserved ? balance - reserved : 0n,
      amountAtomic: spend.amountAtomic,
    },
    policy,
    periodStart,
  };
}

/** Reads everything the rule needs; inside a transaction that locked the vault, the answer holds until commit. */
async function evaluate(
  db: Db,
  chains: VaultFundingDeps['chains'],
  paymentId: string,
  payerAccountId: string,
  now: Date,
): Promise<Evaluation | FundingRefusal> {
  const payment = await db.payment.findUnique({ where: { id: paymentId } });
  if (!payment) throw notFound('Payment');
  const vault = await db.vault.findFirst({ where: { accountId: payerAccountId } });
  if (!vault || vault.appId !== payment.appId || !vault.address) return 'vault_missing';
  const reading = await readSpendFacts(db, chains, vault, spendOfPayment(payment), now);
  return { facts: reading.facts, vault, payment, policyId: reading.policy?.id ?? null, periodStart: reading.periodStart };
}

/**
 * Whether the payer account's vault can pay this receive Payment: the data of a Vault payment option,
 * or null. Advisory (no lock): authorizeVaultFunding decides again under the vault's lock.
 */
export async function vaultOptionFor(
  deps: VaultFundingDeps,
  input: { paymentId: string; payerAccountId: string; now?: Date },
): Promise<VaultOption | null> {
  const now = input.now ?? new Date();
  const e = await evaluate(deps.prisma, deps.chains, input.paymentId, input.payerAccountId, now);
  if (typeof e === 'string' || !decideFunding(e.facts).ok || !e.policyId) return null;
  return {
    paymentMethodType: 'vault',
    vaultId: e.vault.id,
    policyId: e.policyId,
    accountId: e.vault.accountId,
    vaultAddress: e.vault.address!,
    chainId: e.payment.chainId,
    tokenAddress: e.payment.tokenAddress,
    assetSymbol: e.payment.assetCode,
    decimals: e.payment.decimals,
    amountAtomic: e.facts.amountAtomic.toString(),
    availableAtomic: e.facts.availableAtomic.toString(),
    remainingInPeriodAtomic: (e.facts.limitAtomic - e.facts.spentInPeriodAtomic).toString(),
    periodEndsAt: new Date(e.periodStart.getTime() + SPEND_PERIOD_MS).toISOString(),
  };
}

export function toFundingOperationView(r: FundingRow): TFundingOperation {
  return {
    id: r.id,
    status: r.status as TFundingOperation['status'],
    statusVersion: r.statusVersion,
    commercialFeeMode: 'parent_payment',
    transactionHash: r.transactionHash,
    authorizedAt: r.authorizedAt.toISOString(),
    broadcastAt: r.broadcastAt?.toISOString() ?? null,
    confirmedAt: r.confirmedAt?.toISOString() ?? null,
    expiresAt: r.expiresAt?.toISOString() ?? null,
  };
}

/**
 * The Payment's one vault funding that may still move or has moved money: any not failed, or a failed
 * one whose leg may yet be mined (a send that outlived its workflow's give-up).
 */
export async function liveFundingOf(db: Db, paymentId: string): Promise<FundingRow | null> {
  const ops = await db.vaultFundingOperation.findMany({ where: { paymentId }, orderBy: { authorizedAt: 'asc' } });
  const live = ops.find((op) => op.status !== 'failed');
  if (live) return live;
  const failed = ops.map((op) => op.id);
  if (failed.length === 0) return null;
  const leg = await db.settlementLeg.findFirst({
    where: { sourceType: 'vault_funding', sourceId: { in: failed }, status: { in: ['broadcast', 'confirmed'] } },
  });
  return leg ? ops.find((op) => op.id === leg.sourceId)! : null;
}

/**
 * Authorizes the exact Vault-to-escrow transfer for a receive Payment. One transaction: the Payment's
 * row and then the vault's are locked (SELECT ... FOR UPDATE), so concurrent authorizations of one
 * Payment, and of one vault, run one after another and each sees the others' amounts in the period
 * total and the reserved balance. A Payment is paid from one vault at most: already authorized from
 * this vault, it answers its existing operation (created: false); from another, 409 payment_not_open
 * (reasonCode vault_funding_exists). Refusals of the vault are 422 payment_method_not_supported with a
 * reasonCode; nothing is written for any refusal.
 */
export async function authorizeVaultFunding(
  deps: VaultFundingDeps,
  input: { paymentId: string; payerAccountId: string; optionId?: string | null; actor: VaultActor; now?: Date },
): Promise<{ created: boolean; fundingOperation: TFundingOperation; vaultId: string }> {
  const now = input.now ?? new Date();
  return deps.prisma.$transaction(
    async (tx) => {
      // The Payment first, then the vault (as refunds do): one vault payment per Payment, whichever vault.
      await tx.$queryRaw`SELECT id FROM payments WHERE id = ${input.paymentId} FOR UPDATE`;
      const found = await tx.vault.findFirst({ where: { accountId: input.payerAccountId }, select: { id: true } });
      if (!found) throw refusal('vault_missing');
      await lockVault(tx, found.id);
      const existing = await liveFundingOf(tx, input.paymentId);
      if (existing?.vaultId === found.id) return { created: false, fundingOperation: toFundingOperationView(existing), vaultId: found.id };
      if (existing)
        throw new ApiError('payment_not_open', 'This Payment is already being paid from a vault', { reasonCode: 'vault_funding_exists' });
      const e = await evaluate(tx, deps.chains, input.paymentId, input.payerAccountId, now);
      if (typeof e === 'string') throw refusal(e);
      const decision = decideFunding(e.facts);
      if (!decision.ok) throw refusal(decision.reason);
      const id = newId('fundingOperation');
      const row = await tx.vaultFundingOperation.create({
        data: {
          id,
          vaultId: e.vault.id,
          accountId: e.vault.accountId,
          paymentId: e.payment.id,
          optionId: input.optionId ?? null,
          status: 'authorized',
          statusVersion: 1,
          commercialFeeMode: 'parent_payment',
          chainId: e.payment.chainId,
          tokenAddress: e.payment.tokenAddress.toLowerCase(),
          amountAtomic: new Prisma.Decimal(e.facts.amountAtomic.toString()),
          toAddress: e.payment.escrowAddress!.toLowerCase(),
          periodStart: e.periodStart,
          authorizedAt: now,
          expiresAt: e.payment.expiresAt,
        },
      });
      await writeVaultAudit(tx, e.vault, {
        policyId: e.policyId,
        eventType: 'vault.funding.authorized',
        actor: input.actor,
        payload: {
          fundingOperationId: id,
          paymentId: e.payment.id,
          amountAtomic: e.facts.amountAtomic.toString(),
          tokenAddress: e.payment.tokenAddress,
          periodStart: e.periodStart.toISOString(),
          periodAuthorizedAtomic: (e.facts.spentInPeriodAtomic + e.facts.amountAtomic).toString(),
        },
      });
      return { created: true, fundingOperation: toFundingOperationView(row), vaultId: e.vault.id };
    },
    // A vault's authorizations queue on its row lock; the default 5 s would fail the back of a burst.
    { maxWait: 10_000, timeout: 30_000 },
  );
}

function refusal(reason: FundingRefusal): ApiError {
  const messages: Record<FundingRefusal, string> = {
    vault_missing: 'The payer has no vault that can pay this Payment',
    vault_policy_inactive: "The vault's policy is not active",
    vault_token_not_allowed: "The vault's policy does not allow this token",
    vault_spend_limit_exceeded: "The amount exceeds what the vault's policy allows in this period",
    vault_insufficient_balance: 'The vault does not hold enough available funds',
    payment_not_fundable: 'This Payment cannot be funded from a vault now',
  };
  return new ApiError('payment_method_not_supported', messages[reason], { reasonCode: reason });
}
