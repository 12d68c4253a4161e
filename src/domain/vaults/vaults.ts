import type { Address } from 'viem';
import { Prisma, type PrismaClient } from '../../db/client';
import type { TEnvironmentConfig } from '../../config/environments';
import type { AddressBook } from '../../custody';
import type { ChainRegistry } from '../../chain/registry';
import type { AuthenticatedApp } from '../apps/apps';
import { ApiError, notFound } from '../requests/errors';
import { InputError } from '../requests/validation';
import { newId } from '../values/ids';
import { registerCustodyAddress } from '../chain/custody-addresses';
import { writeVaultAudit, type VaultActor } from './vault-audit';
import { periodStartOf, reserveKey, SPEND_PERIOD_MS, vaultNetwork, type VaultToken, type VaultsSetup } from './vault-config';
import { availableVaultsSetup } from '../apps/modules';
import type { TCreateVault, TPutVaultPolicy, TVault } from './vault.schemas';
import { maskEmail, policyTokens, toVaultPolicyView } from './vault-view';

type Db = PrismaClient | Prisma.TransactionClient;
type VaultRow = Awaited<ReturnType<PrismaClient['vault']['findFirstOrThrow']>>;

export interface VaultDeps {
  prisma: PrismaClient;
  custody: AddressBook;
  chains: Pick<ChainRegistry, 'get'>;
}

export const appActor = (app: AuthenticatedApp): VaultActor => ({ type: 'partner_app', id: app.id });

/** Funding that still holds money in the vault: authorized or sent, not yet confirmed or failed. */
export const RESERVING_STATUSES = ['authorized', 'broadcast'];
/** Funding that counts against the spend limit of its period: everything but a failed transfer. */
export const SPENDING_STATUSES = ['authorized', 'broadcast', 'confirmed'];

async function requireAccount(db: Db, appId: string, accountId: string): Promise<void> {
  const account = await db.account.findFirst({ where: { id: accountId, appId }, select: { id: true } });
  if (!account) throw notFound('Account');
}

export async function requireVault(db: Db, appId: string, accountId: string): Promise<VaultRow> {
  await requireAccount(db, appId, accountId);
  const vault = await db.vault.findFirst({ where: { accountId, appId } });
  if (!vault) throw notFound('Vault');
  return vault;
}

/** Locks the vault row for the rest of the transaction: every change to a vault is serialised on it. */
export async function lockVault(tx: Prisma.TransactionClient, vaultId: string): Promise<VaultRow> {
  await tx.$queryRaw`SELECT id FROM vaults WHERE id = ${vaultId} FOR UPDATE`;
  return tx.vault.findUniqueOrThrow({ where: { id: vaultId } });
}

/**
 * Creates the account's vault (201), or answers the existing one (200): one vault per account, on
 * every vault network at once (the address is the same on each EVM chain; chainId is the one it records). The
 * address comes from custody (purpose 'vault', a derivation branch of its own) at the row's sequence
 * number, registered as a service address in the same transaction, so it can never be a payout
 * destination.
 */
export async function createVault(
  deps: VaultDeps,
  app: AuthenticatedApp,
  env: TEnvironmentConfig,
  accountId: string,
  input: TCreateVault,
): Promise<{ created: boolean; vault: TVault }> {
  const setup = availableVaultsSetup(env);
  const network = input.chainId === undefined ? setup.network : vaultNetwork(setup, input.chainId);
  if (!network) throw new ApiError('chain_config_missing', `Vaults are not configured on chain ${input.chainId} for this environment`);
  await requireAccount(deps.prisma, app.id, accountId);
  const result = await deps.prisma.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`;
    const existing = await tx.vault.findFirst({ where: { accountId } });
    if (existing) return { created: false, id: existing.id };
    const id = newId('vault');
    const row = await tx.vault.create({
      data: { id, appId: app.id, accountId, chainId: network.chainId, networkCode: network.code, status: 'active' },
    });
    const address = await registerCustodyAddress(tx, deps.custody, { purpose: 'vault', index: row.custodyIndex });
    await tx.vault.update({ where: { id }, data: { address } });
    await writeVaultAudit(
      tx,
      { id, appId: app.id, accountId },
      {
        policyId: null,
        eventType: 'vault.created',
        actor: appActor(app),
        payload: { accountId, chainId: network.chainId, address },
      },
    );
    return { created: true, id };
  });
  return {
    created: result.created,
    vault: await vaultView(deps, setup, await deps.prisma.vault.findUniqueOrThrow({ where: { id: result.id } })),
  };
}

export async function getVault(
  deps: VaultDeps,
  app: AuthenticatedApp,
  env: TEnvironmentConfig,
  accountId: string,
): Promise<{ vault: TVault }> {
  const setup = availableVaultsSetup(env);
  const vault = await requireVault(deps.prisma, app.id, accountId);
  return { vault: await vaultView(deps, setup, vault) };
}

/**
 * Sets the vault's policy. The new policy waits for its email OTP (pending_approval); the one active
 * before stays in force until then, and a policy still pending is superseded by the new one.
 */
export async function putVaultPolicy(
  deps: VaultDeps,
  app: AuthenticatedApp,
  env: TEnvironmentConfig,
  accountId: string,
  input: TPutVaultPolicy,
): Promise<{ vault: TVault }> {
  const setup = availableVaultsSetup(env);
  const limit = input.spendLimit?.amountAtomic !== undefined ? BigInt(input.spendLimit.amountAtomic) : setup.spendLimit.defaultAmountAtomic;
  if (limit > setup.spendLimit.maxAmountAtomic) {
    throw new InputError(`spendLimit.amountAtomic may be at most ${setup.spendLimit.maxAmountAtomic}`, [
      { field: 'body.spendLimit.amountAtomic', message: `At most ${setup.spendLimit.maxAmountAtomic}` },
    ]);
  }
  const tokens = allowedTokensOf(setup, input.allowedTokens);
  const vault = await requireVault(deps.prisma, app.id, accountId);
  await deps.prisma.$transaction(async (tx) => {
    await lockVault(tx, vault.id);
    const latest = await tx.vaultPolicy.findFirst({ where: { vaultId: vault.id }, orderBy: { version: 'desc' } });
    const superseded = await tx.vaultPolicy.updateMany({
      where: { vaultId: vault.id, status: 'pending_approval' },
      data: { status: 'superseded' },
    });
    const policyId = newId('vaultPolicy');
    const version = (latest?.version ?? 0) + 1;
    await tx.vaultPolicy.create({
      data: {
        id: policyId,
        vaultId: vault.id,
        version,
        status: 'pending_approval',
        spendLimitAtomic: new Prisma.Decimal(limit.toString()),
        spendLimitDecimals: setup.spendLimit.decimals,
        period: input.period,
        allowedTokens: tokens as unknown as Prisma.InputJsonValue,
        approvalMethod: input.managedApproval.method,
        approvalEmail: input.managedApproval.email,
      },
    });
    await writeVaultAudit(tx, vault, {
      policyId,
      eventType: latest ? 'vault.policy.updated' : 'vault.policy.created',
      actor: appActor(app),
      payload: {
        version,
        status: 'pending_approval',
        spendLimitAtomic: limit.toString(),
        period: input.period,
        allowedTokens: tokens,
        approvalMethod: input.managedApproval.method,
        approvalEmail: maskEmail(input.managedApproval.email),
        previousPolicyId: latest?.id ?? null,
        supersededPending: superseded.count,
      },
    });
  });
  return { vault: await vaultView(deps, setup, await deps.prisma.vault.findUniqueOrThrow({ where: { id: vault.id } })) };
}

/** The configured tokens the request names (deduplicated), or 400 naming the first that is not one. */
function allowedTokensOf(setup: VaultsSetup, requested: TPutVaultPolicy['allowedTokens']): VaultToken[] {
  const out: VaultToken[] = [];
  requested.forEach((r, i) => {
    const token = setup.tokens.find((t) => t.chainId === r.chainId && t.tokenAddress.toLowerCase() === r.tokenAddress.toLowerCase());
    if (!token) {
      throw new InputError(`allowedTokens[${i}] is not a vault token of this environment`, [
        { field: `body.allowedTokens.${i}`, message: 'Not one of capabilities.vaults.tokens' },
      ]);
    }
    if (!out.includes(token)) out.push(token);
  });
  return out;
}

/** Atomic amounts per (chain, token) of funding that still holds money in the vault, by reserveKey. */
export async function reservedByToken(db: Db, vaultId: string): Promise<Map<string, bigint>> {
  const rows = await db.vaultFundingOperation.groupBy({
    by: ['chainId', 'tokenAddress'],
    where: { vaultId, status: { in: RESERVING_STATUSES } },
    _sum: { amountAtomic: true },
  });
  // Refunds paid from the vault (src/domain/returns) reserve alike until confirmed or failed.
  const refunds = await db.fundReturn.groupBy({
    by: ['chainId', 'tokenAddress'],
    where: { vaultId, kind: 'refund', status: { in: ['pending', 'broadcast', 'requires_intervention'] } },
    _sum: { amountAtomic: true },
  });
  const reserved = new Map<string, bigint>();
  for (const r of [...rows, ...refunds]) {
    const token = reserveKey(r.chainId, r.tokenAddress);
    reserved.set(token, (reserved.get(token) ?? 0n) + BigInt(r._sum.amountAtomic?.toFixed() ?? '0'));
  }
  return reserved;
}

/**
 * What the vault's current period has spent so far: funding authorized and refunds paid from the
 * vault (src/domain/returns), failed ones excluded. Money leaving a vault counts whatever the reason.
 */
export async function spentInPeriod(db: Db, vaultId: string, periodStart: Date): Promise<bigint> {
  const sum = await db.vaultFundingOperation.aggregate({
    where: { vaultId, periodStart, status: { in: SPENDING_STATUSES } },
    _sum: { amountAtomic: true },
  });
  const periodEnd = new Date(periodStart.getTime() + SPEND_PERIOD_MS);
  const refunds = await db.fundReturn.aggregate({
    where: { vaultId, kind: 'refund', status: { not: 'failed' }, createdAt: { gte: periodStart, lt: periodEnd } },
    _sum: { amountAtomic: true },
  });
  return BigInt(sum._sum.amountAtomic?.toFixed() ?? '0') + BigInt(refunds._sum.amountAtomic?.toFixed() ?? '0');
}

/** Balances are read from the chain (balanceOf at the head) less what authorized funding reserves. */
export async function vaultBalances(
  deps: Pick<VaultDeps, 'prisma' | 'chains'>,
  vault: Pick<VaultRow, 'id' | 'address'>,
  tokens: VaultToken[],
) {
  const reserved = await reservedByToken(deps.prisma, vault.id);
  return Promise.all(
    tokens.map(async (t) => {
      const balance = vault.address
        ? await deps.chains.get(t.chainId).getTokenBalance({ token: t.tokenAddress as Address, owner: vault.address as Address })
        : 0n;
      const held = reserved.get(reserveKey(t.chainId, t.tokenAddress)) ?? 0n;
      const available = balance > held ? balance - held : 0n;
      return { ...t, balanceAtomic: balance.toString(), reservedAtomic: held.toString(), availableAtomic: available.toString() };
    }),
  );
}

async function vaultView(deps: VaultDeps, setup: VaultsSetup, vault: VaultRow): Promise<TVault> {
  const policies = await deps.prisma.vaultPolicy.findMany({ where: { vaultId: vault.id, status: { in: ['active', 'pending_approval'] } } });
  const active = policies.find((p) => p.status === 'active') ?? null;
  const pending = policies.find((p) => p.status === 'pending_approval') ?? null;
  const currency = setup.spendLimit.currency;
  let spendPeriod: TVault['spendPeriod'] = null;
  if (active && vault.periodAnchorAt) {
    const start = periodStartOf(vault.periodAnchorAt, new Date());
    const spent = await spentInPeriod(deps.prisma, vault.id, start);
    const limit = BigInt(active.spendLimitAtomic.toFixed());
    spendPeriod = {
      startsAt: start.toISOString(),
      endsAt: new Date(start.getTime() + SPEND_PERIOD_MS).toISOString(),
      authorizedAtomic: spent.toString(),
      remainingAtomic: (limit > spent ? limit - spent : 0n).toString(),
    };
  }
  // Every configured token is shown; a policy only restricts what funding may spend.
  const balances = await vaultBalances(deps, vault, setup.tokens);
  return {
    id: vault.id,
    accountId: vault.accountId,
    status: vault.status as TVault['status'],
    chainId: vault.chainId,
    address: vault.address ?? '',
    ownership: 'stableyard',
    policy: active ? toVaultPolicyView(active, currency) : null,
    pendingPolicy: pending ? toVaultPolicyView(pending, currency) : null,
    spendPeriod,
    balances,
    createdAt: vault.createdAt.toISOString(),
    updatedAt: vault.updatedAt.toISOString(),
  };
}

export { policyTokens };
