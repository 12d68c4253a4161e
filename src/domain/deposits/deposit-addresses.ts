import type { Prisma, PrismaClient } from '../../db/client';
import { findAsset, findNetwork, type TEnvironmentConfig } from '../../config/environments';
import type { AddressBook } from '../../custody';
import { ApiError, notFound } from '../requests/errors';
import { afterPosition, pageOf, type CursorCodec } from '../requests/pagination';
import type { AuthenticatedApp } from '../apps/apps';
import { newId } from '../values/ids';
import { registerCustodyAddress } from '../chain/custody-addresses';
import type { TCreateDepositAddress, TDepositAddress, TListDepositAddressesQuery } from './deposit.schemas';
import { toDepositAddressView } from './deposit-view';

type Db = PrismaClient | Prisma.TransactionClient;

/** 404 for an account of another app (ids can't be probed). */
export async function requireAccount(db: Db, appId: string, accountId: string): Promise<void> {
  const account = await db.account.findFirst({ where: { id: accountId, appId }, select: { id: true } });
  if (!account) throw notFound('Account');
}

/**
 * Creates (or answers) the account's deposit address for a network and asset. Without `newAddress`
 * the account's existing active address for that network and asset is answered (created: false), so
 * a retried or repeated call never multiplies addresses; `newAddress: true` always derives a fresh one.
 * The check and the insert run under a lock on the account row, so two concurrent calls can't both
 * create the "first" address. The address comes from custody (purpose 'deposit') at the row's own
 * sequence number.
 */
export async function createDepositAddress(
  deps: { prisma: PrismaClient; custody: AddressBook },
  app: AuthenticatedApp,
  env: TEnvironmentConfig,
  accountId: string,
  input: TCreateDepositAddress,
): Promise<{ created: boolean; depositAddress: TDepositAddress }> {
  const { prisma } = deps;
  const network = findNetwork(env, input.chainId);
  if (!network) throw new ApiError('chain_config_missing', `Chain ${input.chainId} is not configured for this environment`);
  const symbol = input.assetSymbol ?? network.defaultAsset;
  const asset = findAsset(network, symbol);
  if (!asset) throw new ApiError('payment_method_not_supported', `${symbol} is not supported on chain ${network.chainId}`);

  const account = await prisma.account.findFirst({ where: { id: accountId, appId: app.id }, include: { settlementProfile: true } });
  if (!account) throw notFound('Account');
  const profile = account.settlementProfile;
  if (!profile || profile.status !== 'active') {
    throw new ApiError('settlement_profile_missing', 'The account needs a settlement profile before it can receive deposits', {
      reasonCode: 'settlement_profile_missing',
    });
  }
  if (profile.chainId !== network.chainId || profile.tokenAddress.toLowerCase() !== asset.tokenAddress.toLowerCase()) {
    throw new ApiError('payment_method_not_supported', `The account settles ${profile.assetSymbol} on chain ${profile.chainId}`, {
      reasonCode: 'settlement_destination_mismatch',
    });
  }

  return prisma.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`;
    if (!input.newAddress) {
      const existing = await tx.depositAddress.findFirst({
        where: { accountId, chainId: network.chainId, assetSymbol: asset.symbol, status: 'active' },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      });
      if (existing) return { created: false, depositAddress: toDepositAddressView(existing) };
    }
    const id = newId('depositAddress');
    const row = await tx.depositAddress.create({
      data: {
        id,
        appId: app.id,
        accountId,
        chainId: network.chainId,
        networkCode: network.code,
        assetSymbol: asset.symbol,
        tokenAddress: asset.tokenAddress,
        decimals: asset.decimals,
        status: 'active',
        platformFeeBps: env.fees.platformFeeBps,
        partnerFeeBps: env.fees.partnerFeeBps,
      },
    });
    const address = await registerCustodyAddress(tx, deps.custody, { purpose: 'deposit', index: row.custodyIndex });
    const withAddress = await tx.depositAddress.update({ where: { id }, data: { address } });
    return { created: true, depositAddress: toDepositAddressView(withAddress) };
  });
}

export async function getDepositAddress(prisma: PrismaClient, app: AuthenticatedApp, accountId: string, depositAddressId: string) {
  await requireAccount(prisma, app.id, accountId);
  const row = await prisma.depositAddress.findFirst({ where: { id: depositAddressId, accountId, appId: app.id } });
  if (!row) throw notFound('Deposit address');
  return { depositAddress: toDepositAddressView(row) };
}

export async function listDepositAddresses(
  prisma: PrismaClient,
  app: AuthenticatedApp,
  accountId: string,
  query: TListDepositAddressesQuery,
  cursors: CursorCodec,
) {
  await requireAccount(prisma, app.id, accountId);
  const scope = `deposit-addresses:${app.id}:${accountId}:${query.chainId ?? ''}:${query.assetSymbol ?? ''}`;
  const position = query.cursor ? cursors.decode(scope, query.cursor) : undefined;
  const filters: Prisma.DepositAddressWhereInput = {
    appId: app.id,
    accountId,
    ...(query.chainId ? { chainId: query.chainId } : {}),
    ...(query.assetSymbol ? { assetSymbol: query.assetSymbol } : {}),
  };
  const rows = await prisma.depositAddress.findMany({
    where: { AND: [filters, afterPosition(position)] },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: query.limit + 1,
  });
  const page = pageOf(rows, query.limit, cursors, scope);
  return { accountId, depositAddresses: page.items.map(toDepositAddressView), nextCursor: page.nextCursor };
}
